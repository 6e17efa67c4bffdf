//go:build !race

package blugeindex

const raceEnabled = false
