package kafka

// Logger is the logging interface of readers and writers; *log.Logger
// implements it.
type Logger interface {
	Printf(string, ...interface{})
}

// LoggerFunc adapts a printf-style function to the Logger interface, for
// instance to plug the methods of a third party logger:
//
//	r := kafka.NewReader(kafka.ReaderConfig{
//		Logger:      kafka.LoggerFunc(zapLogger.Infof),
//		ErrorLogger: kafka.LoggerFunc(zapLogger.Errorf),
//	})
type LoggerFunc func(string, ...interface{})

// Printf calls f.
func (f LoggerFunc) Printf(msg string, args ...interface{}) { f(msg, args...) }
