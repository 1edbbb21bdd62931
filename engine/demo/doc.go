// Package demo runs the embedded demo node: mock devices and a simulated
// agent that writes real resource.txt files under temporary scratch roots.
package demo
