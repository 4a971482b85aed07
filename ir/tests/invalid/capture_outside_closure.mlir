// verify: 5:10: 'rmir.capture_read' op is in `helper`, which is not a closure body
// Only a closure body has an environment to read.
module {
  func.func @helper(%env: !llvm.ptr) -> i32 {
    %k = "rmir.capture_read"(%env) {field = 0 : i64, name = "k", ty = si32} : (!llvm.ptr) -> i32
    return %k : i32
  }
}
