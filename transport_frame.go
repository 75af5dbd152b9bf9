package kafka

// FrameBuffer lets the protocol encoder write a request frame straight
// into f (it checks for this method), saving a copy of every request,
// record batches included, through a buffer of its own.
func (f *frameBuffer) FrameBuffer() *[]byte { return &f.b }
