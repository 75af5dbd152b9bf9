// Every API sub-package of the protocol package, with constructors of its
// message types. TestTableCoversRegisteredPackages keeps this list in step
// with the sub-packages that call protocol.Register.
package kmsgcheck

import (
	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/addoffsetstotxn"
	"github.com/segmentio/kafka-go/protocol/addpartitionstotxn"
	"github.com/segmentio/kafka-go/protocol/alterclientquotas"
	"github.com/segmentio/kafka-go/protocol/alterconfigs"
	"github.com/segmentio/kafka-go/protocol/alterpartitionreassignments"
	"github.com/segmentio/kafka-go/protocol/alteruserscramcredentials"
	"github.com/segmentio/kafka-go/protocol/apiversions"
	"github.com/segmentio/kafka-go/protocol/consumergroupheartbeat"
	"github.com/segmentio/kafka-go/protocol/createacls"
	"github.com/segmentio/kafka-go/protocol/createpartitions"
	"github.com/segmentio/kafka-go/protocol/createtopics"
	"github.com/segmentio/kafka-go/protocol/deleteacls"
	"github.com/segmentio/kafka-go/protocol/deletegroups"
	"github.com/segmentio/kafka-go/protocol/deletetopics"
	"github.com/segmentio/kafka-go/protocol/describeacls"
	"github.com/segmentio/kafka-go/protocol/describeclientquotas"
	"github.com/segmentio/kafka-go/protocol/describeconfigs"
	"github.com/segmentio/kafka-go/protocol/describegroups"
	"github.com/segmentio/kafka-go/protocol/describeuserscramcredentials"
	"github.com/segmentio/kafka-go/protocol/electleaders"
	"github.com/segmentio/kafka-go/protocol/endtxn"
	"github.com/segmentio/kafka-go/protocol/fetch"
	"github.com/segmentio/kafka-go/protocol/findcoordinator"
	"github.com/segmentio/kafka-go/protocol/heartbeat"
	"github.com/segmentio/kafka-go/protocol/incrementalalterconfigs"
	"github.com/segmentio/kafka-go/protocol/initproducerid"
	"github.com/segmentio/kafka-go/protocol/joingroup"
	"github.com/segmentio/kafka-go/protocol/leavegroup"
	"github.com/segmentio/kafka-go/protocol/listgroups"
	"github.com/segmentio/kafka-go/protocol/listoffsets"
	"github.com/segmentio/kafka-go/protocol/listpartitionreassignments"
	"github.com/segmentio/kafka-go/protocol/metadata"
	"github.com/segmentio/kafka-go/protocol/offsetcommit"
	"github.com/segmentio/kafka-go/protocol/offsetdelete"
	"github.com/segmentio/kafka-go/protocol/offsetfetch"
	"github.com/segmentio/kafka-go/protocol/produce"
	"github.com/segmentio/kafka-go/protocol/saslauthenticate"
	"github.com/segmentio/kafka-go/protocol/saslhandshake"
	"github.com/segmentio/kafka-go/protocol/syncgroup"
	"github.com/segmentio/kafka-go/protocol/txnoffsetcommit"
)

type apiPackage struct {
	dir      string // directory under protocol/
	req, res func() protocol.Message
}

var apiPackages = []apiPackage{
	{"addoffsetstotxn", func() protocol.Message { return new(addoffsetstotxn.Request) }, func() protocol.Message { return new(addoffsetstotxn.Response) }},
	{"addpartitionstotxn", func() protocol.Message { return new(addpartitionstotxn.Request) }, func() protocol.Message { return new(addpartitionstotxn.Response) }},
	{"alterclientquotas", func() protocol.Message { return new(alterclientquotas.Request) }, func() protocol.Message { return new(alterclientquotas.Response) }},
	{"alterconfigs", func() protocol.Message { return new(alterconfigs.Request) }, func() protocol.Message { return new(alterconfigs.Response) }},
	{"alterpartitionreassignments", func() protocol.Message { return new(alterpartitionreassignments.Request) }, func() protocol.Message { return new(alterpartitionreassignments.Response) }},
	{"alteruserscramcredentials", func() protocol.Message { return new(alteruserscramcredentials.Request) }, func() protocol.Message { return new(alteruserscramcredentials.Response) }},
	{"apiversions", func() protocol.Message { return new(apiversions.Request) }, func() protocol.Message { return new(apiversions.Response) }},
	{"consumergroupheartbeat", func() protocol.Message { return new(consumergroupheartbeat.Request) }, func() protocol.Message { return new(consumergroupheartbeat.Response) }},
	{"createacls", func() protocol.Message { return new(createacls.Request) }, func() protocol.Message { return new(createacls.Response) }},
	{"createpartitions", func() protocol.Message { return new(createpartitions.Request) }, func() protocol.Message { return new(createpartitions.Response) }},
	{"createtopics", func() protocol.Message { return new(createtopics.Request) }, func() protocol.Message { return new(createtopics.Response) }},
	{"deleteacls", func() protocol.Message { return new(deleteacls.Request) }, func() protocol.Message { return new(deleteacls.Response) }},
	{"deletegroups", func() protocol.Message { return new(deletegroups.Request) }, func() protocol.Message { return new(deletegroups.Response) }},
	{"deletetopics", func() protocol.Message { return new(deletetopics.Request) }, func() protocol.Message { return new(deletetopics.Response) }},
	{"describeacls", func() protocol.Message { return new(describeacls.Request) }, func() protocol.Message { return new(describeacls.Response) }},
	{"describeclientquotas", func() protocol.Message { return new(describeclientquotas.Request) }, func() protocol.Message { return new(describeclientquotas.Response) }},
	{"describeconfigs", func() protocol.Message { return new(describeconfigs.Request) }, func() protocol.Message { return new(describeconfigs.Response) }},
	{"describegroups", func() protocol.Message { return new(describegroups.Request) }, func() protocol.Message { return new(describegroups.Response) }},
	{"describeuserscramcredentials", func() protocol.Message { return new(describeuserscramcredentials.Request) }, func() protocol.Message { return new(describeuserscramcredentials.Response) }},
	{"electleaders", func() protocol.Message { return new(electleaders.Request) }, func() protocol.Message { return new(electleaders.Response) }},
	{"endtxn", func() protocol.Message { return new(endtxn.Request) }, func() protocol.Message { return new(endtxn.Response) }},
	{"fetch", func() protocol.Message { return new(fetch.Request) }, func() protocol.Message { return new(fetch.Response) }},
	{"findcoordinator", func() protocol.Message { return new(findcoordinator.Request) }, func() protocol.Message { return new(findcoordinator.Response) }},
	{"heartbeat", func() protocol.Message { return new(heartbeat.Request) }, func() protocol.Message { return new(heartbeat.Response) }},
	{"incrementalalterconfigs", func() protocol.Message { return new(incrementalalterconfigs.Request) }, func() protocol.Message { return new(incrementalalterconfigs.Response) }},
	{"initproducerid", func() protocol.Message { return new(initproducerid.Request) }, func() protocol.Message { return new(initproducerid.Response) }},
	{"joingroup", func() protocol.Message { return new(joingroup.Request) }, func() protocol.Message { return new(joingroup.Response) }},
	{"leavegroup", func() protocol.Message { return new(leavegroup.Request) }, func() protocol.Message { return new(leavegroup.Response) }},
	{"listgroups", func() protocol.Message { return new(listgroups.Request) }, func() protocol.Message { return new(listgroups.Response) }},
	{"listoffsets", func() protocol.Message { return new(listoffsets.Request) }, func() protocol.Message { return new(listoffsets.Response) }},
	{"listpartitionreassignments", func() protocol.Message { return new(listpartitionreassignments.Request) }, func() protocol.Message { return new(listpartitionreassignments.Response) }},
	{"metadata", func() protocol.Message { return new(metadata.Request) }, func() protocol.Message { return new(metadata.Response) }},
	{"offsetcommit", func() protocol.Message { return new(offsetcommit.Request) }, func() protocol.Message { return new(offsetcommit.Response) }},
	{"offsetdelete", func() protocol.Message { return new(offsetdelete.Request) }, func() protocol.Message { return new(offsetdelete.Response) }},
	{"offsetfetch", func() protocol.Message { return new(offsetfetch.Request) }, func() protocol.Message { return new(offsetfetch.Response) }},
	{"produce", func() protocol.Message { return new(produce.Request) }, func() protocol.Message { return new(produce.Response) }},
	{"saslauthenticate", func() protocol.Message { return new(saslauthenticate.Request) }, func() protocol.Message { return new(saslauthenticate.Response) }},
	{"saslhandshake", func() protocol.Message { return new(saslhandshake.Request) }, func() protocol.Message { return new(saslhandshake.Response) }},
	{"syncgroup", func() protocol.Message { return new(syncgroup.Request) }, func() protocol.Message { return new(syncgroup.Response) }},
	{"txnoffsetcommit", func() protocol.Message { return new(txnoffsetcommit.Request) }, func() protocol.Message { return new(txnoffsetcommit.Response) }},
}
