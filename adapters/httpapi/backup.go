package httpapi

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"go.uber.org/zap"

	"github.com/climatesearch/climatesearch/ports"
)

// BackupTrailer is the HTTP trailer set to "complete" after the last byte
// of a whole backup; a stream cut short (the store failed half-way, after
// the 200 was sent) ends without it, so a client can tell.
const BackupTrailer = "X-Backup-Status"

// MountBackup serves GET /admin/backup behind the admin token: a
// consistent online backup of the store, streamed (badger's backup format;
// `climatesearch restore FILE` loads it into an empty data directory).
func (a *API) MountBackup(b ports.Backup) {
	a.engine.GET("/admin/backup", a.adminGuard, func(c *gin.Context) { a.backup(c, b) })
	a.refuseHead("/admin/backup", "take a whole backup of the store")
}

// RefuseBackup answers GET /admin/backup with 501 and why, for a store
// that is backed up with its own tools (PostgreSQL: pg_dump).
func (a *API) RefuseBackup(why string) {
	a.engine.GET("/admin/backup", a.adminGuard, func(c *gin.Context) {
		if checkParams(c) {
			writeError(c, http.StatusNotImplemented, why)
		}
	})
	a.refuseHead("/admin/backup", "take a whole backup of the store")
}

func (a *API) backup(c *gin.Context, b ports.Backup) {
	if !checkParams(c) {
		return
	}
	// A large store takes longer than the server's write timeout, which
	// bounds ordinary answers.
	_ = http.NewResponseController(c.Writer).SetWriteDeadline(time.Time{})
	h := c.Writer.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", `attachment; filename="climatesearch-`+time.Now().UTC().Format("20060102T150405Z")+`.backup"`)
	h.Set("Cache-Control", "no-store")
	h.Set("Trailer", BackupTrailer)
	c.Status(http.StatusOK)
	start := time.Now()
	if err := b.Backup(c.Request.Context(), c.Writer); err != nil {
		a.d.Log.Error("backup failed; the stream ends without its trailer", zap.Error(err))
		return
	}
	h.Set(BackupTrailer, "complete")
	a.d.Log.Info("backup sent", zap.Int("bytes", c.Writer.Size()), zap.Duration("took", time.Since(start)))
}
