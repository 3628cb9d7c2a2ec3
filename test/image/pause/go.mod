module sandbox-extender/test/image/pause

go 1.22
