"test.op"() : () -> () loc("just a name")
"test.op"() : () -> () loc("")
