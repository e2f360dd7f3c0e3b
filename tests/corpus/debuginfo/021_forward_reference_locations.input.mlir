"test.use"(%0) : (i32) -> () loc("use")
%0 = "test.def"() : () -> i32 loc("def")
