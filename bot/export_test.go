package bot

// SetCustomToolsForTest wires /tools and the admin API's custom tools into
// a router built before their store existed.
func (r *Router) SetCustomToolsForTest(o CustomToolOptions) { r.opts.CustomTools = o }
