module github.com/fgtop/fgtop

go 1.26.8

require github.com/cockroachdb/apd/v3 v3.2.1 // indirect
