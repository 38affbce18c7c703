package agentcore

// maxImagesPerCall is how many pictures one model call is shown: those of
// the newest user messages. In a long chat with many screenshots, sending
// every picture of the window on every call would send megabytes each
// time, spend tokens on pictures the talk has moved past and break the
// providers' per-request limits; the model is told of each older one
// (notShownAgain) and can ask for it with read_image. The providers' own
// per-request limits (imageLimits) are far above it.
const maxImagesPerCall = 8

// notShownAgain is the note the model reads for the i-th image of m when
// it is left out of a call to keep within the budget.
func notShownAgain(m Message, i int) string {
	return "[image " + imageLabel(m, i) + " not shown again; read_image reads it]"
}

// imageBudget counts the pictures a model call shows, newest first.
type imageBudget struct {
	images, maxImages int
	bytes, maxBytes   int // maxBytes 0: no byte limit
}

// full reports whether the budget takes no more pictures at all.
func (b *imageBudget) full() bool { return b.images >= b.maxImages }

// take reports whether a picture of size bytes still fits, and counts it
// when it does.
func (b *imageBudget) take(size int) bool {
	if b.full() || b.maxBytes > 0 && b.bytes+size > b.maxBytes {
		return false
	}
	b.images++
	b.bytes += size
	return true
}

// newestFirst calls f for each user message of msgs that has images, the
// newest first, with a copy of msgs it may change (copied on the first
// call, so msgs itself is never changed). It returns msgs when f was never
// called.
func newestFirst(msgs []Message, f func(m *Message)) []Message {
	var out []Message
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != RoleUser || len(msgs[i].Images) == 0 {
			continue
		}
		if out == nil {
			out = append([]Message(nil), msgs...)
		}
		f(&out[i])
	}
	if out == nil {
		return msgs
	}
	return out
}

// fitRequestImages returns msgs with every image that carries bytes
// fitted to lim (fitImage), the newest first, within the provider's
// per-request limits: one that cannot be fitted, or no longer fits in the
// request, keeps no bytes and gets a note in its message's text. The
// newest image always fits, as lim.maxBytes is below the request budget.
func fitRequestImages(msgs []Message, lim imageLimits) []Message {
	budget := imageBudget{maxImages: lim.maxImages, maxBytes: lim.maxRequestBytes}
	return newestFirst(msgs, func(m *Message) {
		images := append([]Image(nil), m.Images...)
		var notes []string
		for i, im := range images {
			if im.Data == nil {
				continue
			}
			images[i].Data = nil
			typ, data, err := fitImage(im.Data, lim)
			switch {
			case err != nil:
				notes = append(notes, unreadableImage(*m, i))
			case !budget.take(len(data)):
				notes = append(notes, notShownAgain(*m, i))
			default:
				images[i].Type, images[i].Data = typ, data
			}
		}
		m.Images = images
		m.Content = withNotes(m.Content, notes)
	})
}
