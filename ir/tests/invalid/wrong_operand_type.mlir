// expect: 5:10: expected '!llvm.ptr' but got 'i32'
// rmir.load reads through an address, not an integer.
module {
  func.func @f(%x: i32) -> i32 {
    %v = "rmir.load"(%x) {ty = si32} : (i32) -> i32
    return %v : i32
  }
}
