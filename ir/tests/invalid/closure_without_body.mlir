// verify: 3:3: 'rmir.closure' op names the body `gone::{closure#0}`, which is not a func.func of this module
module {
  "rmir.closure"() {body = @"gone::{closure#0}", kind = "fn", params = [si32, si32], ret = si32, ty = !rmir.closure_ty<"a.rs", 1, 1, 1, 9>} : () -> ()
}
