package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/core"
)

// MaxWebhookBody bounds the JSON body of POST and PATCH /admin/webhooks: a
// destination is a URL and a few short fields.
const MaxWebhookBody = 64 << 10

// destinationList is the answer of GET /admin/webhooks.
type destinationList struct {
	Destinations []core.Destination `json:"destinations"`
}

// orEmpty turns a nil slice into an empty one: the document declares no
// nullable arrays, and encoding/json writes nil slices as null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// present readies a destination for JSON (empty events mean "every event").
func present(d core.Destination) core.Destination {
	d.Events = orEmpty(d.Events)
	return d
}

// readDestinationInput decodes the one JSON DestinationInput of the body,
// refusing unknown fields so a misspelt option is not silently ignored.
func readDestinationInput(c *gin.Context) (core.DestinationInput, bool) {
	var in core.DestinationInput
	dec := json.NewDecoder(http.MaxBytesReader(c.Writer, c.Request.Body, MaxWebhookBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			writeError(c, http.StatusRequestEntityTooLarge, "body exceeds "+strconv.Itoa(MaxWebhookBody>>10)+" KiB")
		case errors.Is(err, io.EOF):
			writeError(c, http.StatusBadRequest, "body is empty: send a JSON WebhookDestinationInput")
		default:
			writeError(c, http.StatusBadRequest, "body is not a valid WebhookDestinationInput: "+err.Error())
		}
		return in, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		writeError(c, http.StatusBadRequest, "body holds more than one JSON value")
		return in, false
	}
	return in, true
}

func (a *API) listWebhooks(c *gin.Context) {
	if !checkParams(c) {
		return
	}
	ds, err := a.d.Webhooks.List(c)
	if err != nil {
		a.fail(c, err)
		return
	}
	for i := range ds {
		ds[i] = present(ds[i])
	}
	c.JSON(http.StatusOK, destinationList{Destinations: orEmpty(ds)})
}

func (a *API) createWebhook(c *gin.Context) {
	if !checkParams(c) {
		return
	}
	in, ok := readDestinationInput(c)
	if !ok {
		return
	}
	d, err := a.d.Webhooks.Create(c, in)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.Header("Location", "/admin/webhooks/"+url.PathEscape(d.ID))
	c.JSON(http.StatusCreated, present(d))
}

func (a *API) getWebhook(c *gin.Context) {
	if !checkParams(c) {
		return
	}
	d, err := a.d.Webhooks.Get(c, c.Param("id"))
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, present(d))
}

func (a *API) updateWebhook(c *gin.Context) {
	if !checkParams(c) {
		return
	}
	in, ok := readDestinationInput(c)
	if !ok {
		return
	}
	d, err := a.d.Webhooks.Update(c, c.Param("id"), in)
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, present(d))
}

func (a *API) deleteWebhook(c *gin.Context) {
	if !checkParams(c) {
		return
	}
	if err := a.d.Webhooks.Delete(c, c.Param("id")); err != nil {
		a.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// testWebhook answers 200 even when the delivery failed: the attempt was
// made, and its status and response code say what the receiver answered.
func (a *API) testWebhook(c *gin.Context) {
	if !checkParams(c) {
		return
	}
	at, err := a.d.Webhooks.Test(c, c.Param("id"))
	if err != nil {
		a.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, at)
}

func (a *API) webhookDeliveries(c *gin.Context) {
	if !checkParams(c, "limit") {
		return
	}
	limit, ok := parseInt(c, "limit", 1, core.MaxDeliveryLog)
	if !ok {
		return
	}
	if limit == 0 {
		limit = core.DefaultDeliveryList
	}
	log, err := a.d.Webhooks.Deliveries(c, c.Param("id"), limit)
	if err != nil {
		a.fail(c, err)
		return
	}
	log.Attempts = orEmpty(log.Attempts)
	c.JSON(http.StatusOK, log)
}

// eventList is the answer of GET /admin/events.
type eventList struct {
	Events []core.EventRecord `json:"events"`
}

func (a *API) events(c *gin.Context) {
	if !checkParams(c, "limit") {
		return
	}
	limit, ok := parseInt(c, "limit", 1, core.MaxEventHistory)
	if !ok {
		return
	}
	if limit == 0 {
		limit = core.DefaultEventList
	}
	recs, err := a.d.Webhooks.Events(c, limit)
	if err != nil {
		a.fail(c, err)
		return
	}
	for i := range recs {
		recs[i].Deliveries = orEmpty(recs[i].Deliveries)
	}
	c.JSON(http.StatusOK, eventList{Events: orEmpty(recs)})
}
