// comment line

    "test.op"() : () -> ()
	"test.tab"() : () -> ()
