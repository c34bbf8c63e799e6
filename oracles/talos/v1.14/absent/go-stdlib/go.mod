module github.com/neticdk/go-stdlib

go 1.22
