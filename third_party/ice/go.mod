module github.com/blugelabs/ice

go 1.12

require (
	github.com/RoaringBitmap/roaring v0.9.1
	github.com/blevesearch/mmap-go v1.0.4
	github.com/blevesearch/vellum v1.0.5
	github.com/blugelabs/bluge_segment_api v0.2.0
	github.com/golang/snappy v0.0.1
	github.com/spf13/cobra v0.0.5
)
