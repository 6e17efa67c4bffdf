package console

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/climatesearch/climatesearch/core"
)

type webhooksPage struct {
	layout
	Destinations []core.Destination
	Pending      map[string]int
	Events       []core.EventType
	Flash        *flash
	Error        string
	Status       int
	// Form keeps what was typed when an add was refused.
	Form webhookForm
}

type webhookForm struct {
	URL, Kind, Description string
	Events                 map[core.EventType]bool
	Enabled                bool
}

type webhookPage struct {
	layout
	D      core.Destination
	Log    core.DeliveryLog
	Events []core.EventType
	Wants  map[core.EventType]bool
	Flash  *flash
	Error  string
	Status int
}

func (c *Console) webhooksPage(g *gin.Context) {
	p := c.newWebhooksPage(g)
	c.render(g, http.StatusOK, "webhooks", p)
}

func (c *Console) newWebhooksPage(g *gin.Context) webhooksPage {
	p := webhooksPage{layout: c.layout(g, "Webhooks", "webhooks"), Events: core.SubscribableEvents, Pending: map[string]int{},
		Form: webhookForm{Enabled: true, Events: map[core.EventType]bool{}}}
	if fl, ok := readFlash[core.DeliveryAttempt](c, g, "flash", false); ok {
		p.Flash = fl
	}
	ds, err := c.d.Webhooks.List(g)
	if err != nil {
		p.Status, p.Error = statusOf(err)
	}
	p.Destinations = ds
	for _, d := range ds {
		if l, err := c.d.Webhooks.Deliveries(g, d.ID, 1); err == nil {
			p.Pending[d.ID] = l.Pending
		}
	}
	return p
}

// destinationInput reads the add/edit form.
func destinationInput(g *gin.Context, create bool) core.DestinationInput {
	in := core.DestinationInput{}
	u := strings.TrimSpace(g.PostForm("url"))
	in.URL = &u
	kind := g.PostForm("kind")
	if kind != "" && kind != "auto" {
		in.Kind = &kind
	} else if !create {
		empty := ""
		in.Kind = &empty // detect again from the URL
	}
	evs := g.PostFormArray("events")
	in.Events = &evs
	enabled := g.PostForm("enabled") != ""
	in.Enabled = &enabled
	desc := g.PostForm("description")
	in.Description = &desc
	return in
}

func (c *Console) webhookCreate(g *gin.Context) {
	in := destinationInput(g, true)
	d, err := c.d.Webhooks.Create(g, in)
	if err != nil {
		p := c.newWebhooksPage(g)
		p.Status, p.Error = statusOf(err)
		p.Form = webhookForm{URL: *in.URL, Description: *in.Description, Enabled: *in.Enabled, Events: map[core.EventType]bool{}}
		if in.Kind != nil {
			p.Form.Kind = *in.Kind
		}
		for _, e := range *in.Events {
			p.Form.Events[core.EventType(e)] = true
		}
		c.render(g, p.Status, "webhooks", p)
		return
	}
	c.redirectFlash(g, "/webhooks/"+d.ID, nil, "flash", flash{Notice: "Destination added.", Secret: d.Secret})
}

func (c *Console) webhookPage(g *gin.Context) {
	id := g.Param("id")
	d, err := c.d.Webhooks.Get(g, id)
	if err != nil {
		c.failErr(g, err)
		return
	}
	p := webhookPage{layout: c.layout(g, "Webhook "+d.ID, "webhooks"), D: d, Events: core.SubscribableEvents, Wants: map[core.EventType]bool{}}
	for _, e := range d.Events {
		p.Wants[e] = true
	}
	if len(d.Events) == 0 {
		for _, e := range core.SubscribableEvents {
			p.Wants[e] = true
		}
	}
	if fl, ok := readFlash[core.DeliveryAttempt](c, g, "flash", true); ok {
		p.Flash = fl
	}
	p.Log, err = c.d.Webhooks.Deliveries(g, id, core.DefaultDeliveryList)
	if err != nil {
		p.Status, p.Error = statusOf(err)
	}
	c.render(g, http.StatusOK, "webhook", p)
}

// changed redirects to the destination's page with a notice, or renders
// it with the API's refusal.
func (c *Console) changed(g *gin.Context, id string, err error, fl flash) {
	if err != nil {
		status, msg := statusOf(err)
		if status == http.StatusNotFound {
			c.fail(g, status, msg)
			return
		}
		c.redirectFlash(g, "/webhooks/"+id, nil, "flash", flash{Error: msg})
		return
	}
	c.redirectFlash(g, "/webhooks/"+id, nil, "flash", fl)
}

func (c *Console) webhookUpdate(g *gin.Context) {
	id := g.Param("id")
	_, err := c.d.Webhooks.Update(g, id, destinationInput(g, false))
	c.changed(g, id, err, flash{Notice: "Destination saved."})
}

func (c *Console) webhookEnabled(g *gin.Context) {
	id := g.Param("id")
	on := g.PostForm("enabled") == "true"
	_, err := c.d.Webhooks.Update(g, id, core.DestinationInput{Enabled: &on})
	c.changed(g, id, err, flash{Notice: map[bool]string{true: "Destination enabled.", false: "Destination disabled: it receives no events until enabled again."}[on]})
}

func (c *Console) webhookRotate(g *gin.Context) {
	id := g.Param("id")
	d, err := c.d.Webhooks.Update(g, id, core.DestinationInput{RotateSecret: true})
	c.changed(g, id, err, flash{Notice: "Secret rotated: the old secret no longer verifies new deliveries.", Secret: d.Secret})
}

func (c *Console) webhookTest(g *gin.Context) {
	id := g.Param("id")
	a, err := c.d.Webhooks.Test(g, id)
	fl := flash{Data: a}
	if err == nil {
		if a.Status == core.DeliveryDelivered {
			fl.Notice = "Test delivered."
		} else {
			fl.Error = "Test not delivered."
		}
	}
	c.changed(g, id, err, fl)
}

func (c *Console) webhookDeleteConfirm(g *gin.Context) {
	d, err := c.d.Webhooks.Get(g, g.Param("id"))
	if err != nil {
		c.failErr(g, err)
		return
	}
	c.render(g, http.StatusOK, "webhook_delete", webhookPage{layout: c.layout(g, "Delete webhook", "webhooks"), D: d})
}

func (c *Console) webhookDelete(g *gin.Context) {
	id := g.Param("id")
	if err := c.d.Webhooks.Delete(g, id); err != nil {
		status, msg := statusOf(err)
		if status == http.StatusNotFound {
			c.fail(g, status, msg)
			return
		}
		c.redirectFlash(g, "/webhooks/"+id, nil, "flash", flash{Error: msg})
		return
	}
	c.redirectFlash(g, "/webhooks", nil, "flash", flash{Notice: "Destination " + id + " deleted with its queued deliveries and its log."})
}
