package console

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"sort"
	"time"
)

// page is what every template is given.
type page struct {
	Title string
	// Nav is the menu entry of this page.
	Nav     string
	Session Session
	Error   string
	Notice  string
	// LoginCSRF, Link and TokenLogin fill the login form.
	LoginCSRF  string
	Link       string
	TokenLogin bool
	// Data is the page's own.
	Data any
}

// pageNames are the templates/NAME.html pages; layout.html wraps each.
var pageNames = []string{"login", "error", "approvals", "audit", "conversations", "conversation", "jobs", "usage", "agents", "access", "system"}

// templateFuncs are the helpers templates use; none returns
// template.HTML, so everything shown is escaped.
var templateFuncs = template.FuncMap{
	"utc": func(t time.Time) string {
		if t.IsZero() {
			return "–"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"deref": func(f *float64) float64 { return *f },
	"pairs": func(m map[string]any) []kv {
		out := make([]kv, 0, len(m))
		for k, v := range m {
			out = append(out, kv{K: k, V: fmt.Sprint(v)})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].K < out[j].K })
		return out
	},
}

// kv is one key and value shown as text.
type kv struct{ K, V string }

// parsePages parses each page with the layout.
func parsePages() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, name := range pageNames {
		out[name] = template.Must(template.New("layout.html").Funcs(templateFuncs).
			ParseFS(templateFiles, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}

// render writes page name with p, or a plain error when it cannot be
// made (a bug: the templates are fixed).
func (c *Console) render(w http.ResponseWriter, r *http.Request, code int, name string, p page) {
	c.renderTemplate(w, code, name, "layout.html", p)
}

// renderTemplate executes the template called tmpl of page name.
func (c *Console) renderTemplate(w http.ResponseWriter, code int, name, tmpl string, p any) {
	var b bytes.Buffer
	if err := c.pages[name].ExecuteTemplate(&b, tmpl, p); err != nil {
		c.log.Error("console: render page", "page", name, "err", err)
		http.Error(w, "The page could not be shown; the log says why.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write(b.Bytes())
}
