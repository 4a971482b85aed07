// verify: 6:5: 'rmir.store' op uses a !rmir.call_arg; only rmir.call may
// A call argument is consumed by exactly one rmir.call.
module {
  func.func @f(%a: i32, %p: !llvm.ptr) {
    %w = "rmir.arg"(%a) : (i32) -> !rmir.call_arg
    "rmir.store"(%p, %w) {ty = si32} : (!llvm.ptr, !rmir.call_arg) -> ()
    return
  }
}
