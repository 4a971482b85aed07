// expect: 5:5: unregistered operation 'rmir.frobnicate'
// The dialect is closed: no op outside the IRDL definition.
module {
  func.func @f() {
    "rmir.frobnicate"() : () -> ()
    return
  }
}
