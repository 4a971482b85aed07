// expect: 2:1: is expected but not provided
"rmir.registration"() : () -> () loc("":2:1)
