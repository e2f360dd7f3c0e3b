"test.a"() {l = loc("x"), m = [loc("y":1:2)]} : () -> () loc("op")
