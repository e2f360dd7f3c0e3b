"test.op"() : () -> () loc(unknown)
