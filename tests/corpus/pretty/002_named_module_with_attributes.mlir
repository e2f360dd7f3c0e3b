module @named attributes {my.flag, my.value = 3 : i32} {
}
