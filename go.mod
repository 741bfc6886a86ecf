module github.com/reinsdev/reins

go 1.26.8
