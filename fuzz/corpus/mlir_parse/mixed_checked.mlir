// expect: 5:12: expected 'i32' but got 'i64'
// Checked arithmetic takes two operands of one type.
module {
  func.func @f(%a: i32, %b: i64) {
    %v:2 = "rmir.checked"(%a, %b) {op = "add"} : (i32, i64) -> (i32, i1)
    return
  }
}
