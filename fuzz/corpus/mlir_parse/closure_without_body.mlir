// verify: 3:3: 'rmir.closure' op names the body `gone::{closure#0}`, which is not a func.func of this module
module {
  "rmir.closure"() {body = "gone::{closure#0}", kind = "fn", params = ["i32", "i32"], ret = "i32", ty = "{closure@a.rs:1:1: 1:9}"} : () -> ()
}
