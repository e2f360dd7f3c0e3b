"builtin.module"() ({
  %0 = "test.def"() : () -> i32
  %1 = "test.def"() : () -> i32
  %2 = "test.def"() : () -> i32
  %3 = "test.def"() : () -> i32
  %4 = "test.def"() : () -> i32
  %5 = "test.def"() : () -> i32
  %6 = "test.def"() : () -> i32
  %7 = "test.def"() : () -> i32
  %8 = "test.def"() : () -> i32
  %9 = "test.def"() : () -> i32
  %10 = "test.def"() : () -> i32
  %11 = "test.def"() : () -> i32
  %12 = "test.def"() : () -> i32
  %13 = "test.def"() : () -> i32
  %14 = "test.def"() : () -> i32
  %15 = "test.def"() : () -> i32
  %16 = "test.def"() : () -> i32
  %17 = "test.def"() : () -> i32
  %18 = "test.def"() : () -> i32
  %19 = "test.def"() : () -> i32
  %20 = "test.def"() : () -> i32
  %21 = "test.def"() : () -> i32
  %22 = "test.def"() : () -> i32
  %23 = "test.def"() : () -> i32
  %24 = "test.def"() : () -> i32
  "test.use"(%0, %24) : (i32, i32) -> ()
}) : () -> ()
