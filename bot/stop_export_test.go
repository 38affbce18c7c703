package bot

// StopsListeningForTest reports whether RunStops hears other replicas'
// stops yet.
func (r *Router) StopsListeningForTest() bool { return r.stopsListening.Load() }
