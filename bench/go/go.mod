module sandbox-extender/bench/go

go 1.26
