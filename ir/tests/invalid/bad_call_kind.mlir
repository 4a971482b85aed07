// expect: 5:5: '"virtual"' does not satisfy the constraint
// Call kinds are a closed set.
module {
  func.func @f() {
    "rmir.call"() {callee = "g", kind = "virtual", receiver = tuple<>, text = "g", sret = false, unwind = "continue"} : () -> ()
    return
  }
}
