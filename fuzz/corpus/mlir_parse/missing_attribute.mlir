// expect: 5:10: attribute "ty" is expected but not provided
// rmir.local must say the MIR type of its local.
module {
  func.func @f() {
    %s = "rmir.local"() {index = 1 : i64} : () -> !llvm.ptr
    return
  }
}
