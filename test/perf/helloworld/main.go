// Command helloworld is the yardstick of test/perf/throughput.sh: a gin
// hello-world built from this module, so with the service's gin version
// (go.mod), in release mode, with gin's Recovery middleware and no logger.
//
//	go run ./test/perf/helloworld -addr 127.0.0.1:18520
package main

import (
	"flag"
	"log"
	"net/http"

	"github.com/gin-gonic/gin"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18520", "listen address")
	flag.Parse()
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(gin.Recovery())
	r.GET("/", func(c *gin.Context) { c.String(http.StatusOK, "Hello, World!") })
	log.Fatal(r.Run(*addr))
}
