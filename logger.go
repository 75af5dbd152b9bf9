package kafka

// Logger is the logging interface of readers and writers; *log.Logger
// implements it.
type Logger interface {
	Printf(string, ...interface{})
}

// LoggerFunc turns any function with Printf's signature into a Logger,
// such as a method of a structured logger or a closure:
//
//	w := &kafka.Writer{
//		ErrorLogger: kafka.LoggerFunc(func(format string, args ...interface{}) {
//			slog.Error(fmt.Sprintf(format, args...))
//		}),
//	}
type LoggerFunc func(string, ...interface{})

// Printf calls f.
func (f LoggerFunc) Printf(msg string, args ...interface{}) { f(msg, args...) }
