package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"connectrpc.com/connect"
	"connectrpc.com/vanguard"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// requestReadTimeout is how long a client has to send a request's body, once its headers are
// in (ReadHeaderTimeout bounds those). A request of hearts.v1 is one small message.
const requestReadTimeout = 15 * time.Second

// withReadDeadline gives each request timeout to arrive whole: reading its body fails after
// that, which ends the call. Without a deadline a client that announces a body and never sends
// it would hold the call, and its goroutines, for as long as it kept the connection open.
//
// The deadline bounds the request only: once the body has been read, net/http lifts it (HTTP/1.1)
// or it has nothing left to end (HTTP/2, where it is the stream's), so a response stream
// (WatchTable) lasts as long as it needs to; TestStreamsOutliveTheReadDeadline checks both.
// Every method of hearts.v1 takes a single request message; a client-streaming method would
// need an exception here.
func withReadDeadline(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A request without a body (a REST GET or DELETE) has nothing to wait for, and on
		// HTTP/1.1 net/http is already reading the connection in the background for it: a
		// deadline there would end the call, and the connection, while the backend answers.
		if r.Body != nil && r.Body != http.NoBody {
			// An error means no deadlines (not net/http's server: a test's recorder).
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
		}
		next.ServeHTTP(w, r)
	})
}

// requestJSONCodec is vanguard's JSON codec, except that a request that is not valid JSON for
// its message is INVALID_ARGUMENT / INVALID_REQUEST, the server's answer to a request that does
// not parse, rather than UNKNOWN (HTTP 500) without details, and so is an enum value given by a
// name its enum does not have. The transcoder decodes only requests with it (responses come from
// the backend in binary), so every error here is the client's.
type requestJSONCodec struct {
	*vanguard.JSONCodec
}

func newRequestJSONCodec(resolver vanguard.TypeResolver) vanguard.Codec {
	return requestJSONCodec{vanguard.NewJSONCodec(resolver)}
}

func (c requestJSONCodec) Unmarshal(data []byte, msg proto.Message) error {
	err := c.JSONCodec.Unmarshal(data, msg)
	if err == nil {
		err = checkEnumNames(data, func(value any) error {
			descriptor := msg.ProtoReflect().Descriptor()
			if body, ok := restBodyFields()[descriptor.FullName()]; ok {
				// A REST body that is one field of its request (CreateTable's table): vanguard
				// decodes it as that field's message.
				if err := checkRequestFieldsInBody(value, body.ContainingMessage(), body); err != nil {
					return err
				}
			}
			return checkMessageEnums(value, descriptor, "")
		})
	}
	if err != nil {
		return malformedJSON(msg, err)
	}
	return nil
}

// UnmarshalField decodes a REST body that is one field of the request (CreateTable's table).
func (c requestJSONCodec) UnmarshalField(data []byte, msg proto.Message, field protoreflect.FieldDescriptor) error {
	err := c.JSONCodec.UnmarshalField(data, msg, field)
	if err == nil {
		err = checkEnumNames(data, func(value any) error {
			return checkFieldEnums(value, field, field.JSONName())
		})
	}
	if err != nil {
		return malformedJSON(msg, err)
	}
	return nil
}

// restBodyFields maps the message type of every REST body that is one field of its request
// (CreateTable's body is its hearts.v1.Table) to that field.
var restBodyFields = sync.OnceValue(func() map[protoreflect.FullName]protoreflect.FieldDescriptor {
	fields := map[protoreflect.FullName]protoreflect.FieldDescriptor{}
	routes, _ := restRoutes(tableServiceDescriptor()) // an error fails the gateway's start anyway
	for _, route := range routes {
		if route.body == "" || route.body == "*" {
			continue
		}
		if field := route.request.Fields().ByName(protoreflect.Name(route.body)); field != nil && field.Message() != nil {
			fields[field.Message().FullName()] = field
		}
	}
	return fields
})

// checkRequestFieldsInBody refuses a body that is one field of the request (CreateTable's
// table) but names, at its top level, a field of the request instead of one of its own: the
// body wrapped as the whole request ({"table": {...}}), or a requestId sent in the body. Unknown
// fields are ignored, so either would pass unnoticed: a table of defaults, or a retry that makes
// a second table because its request id never arrived.
func checkRequestFieldsInBody(value any, request protoreflect.MessageDescriptor, body protoreflect.FieldDescriptor) error {
	object, ok := value.(map[string]any)
	if !ok || body.Message() == nil {
		return nil
	}
	own := body.Message().Fields()
	keys := make([]string, 0, len(object))
	for key := range object {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		if own.ByJSONName(key) != nil || own.ByTextName(key) != nil {
			continue
		}
		field := request.Fields().ByJSONName(key)
		if field == nil {
			field = request.Fields().ByTextName(key)
		}
		switch {
		case field == nil:
			continue // unknown to both: ignored, as the API promises
		case field.Number() == body.Number():
			return fmt.Errorf("the body is the %s itself, not a request that holds it: send its fields at the top level", body.Name())
		case strings.HasSuffix(string(field.Name()), "_token"):
			// A credential: over REST it could only go in the query string, which access logs
			// record.
			return fmt.Errorf("the body is the request's %s; %q is a field of the request, which REST can carry only in the URL: call this over Connect or gRPC-Web to keep it out of URLs", body.Name(), key)
		default:
			return fmt.Errorf("the body is the request's %s; %q is a field of the request: send it in the query string (?%s=...)", body.Name(), key, field.JSONName())
		}
	}
	return nil
}

func malformedJSON(msg proto.Message, err error) error {
	return invalidRequestError(fmt.Errorf("the request is not valid JSON for %s: %w", msg.ProtoReflect().Descriptor().FullName(), err))
}

// checkEnumNames runs check on data, JSON that protojson has decoded already, as plain Go
// values. vanguard decodes with protojson's DiscardUnknown, so that unknown fields are ignored
// as the API promises; but that option drops an unknown enum name too, silently, leaving the
// field at 0: a typo ("SEAT_OCCUPANT_BOTT") would make another table than the one asked for
// (an empty seat instead of a bot). The names are checked here instead, against the request's
// descriptor; an unknown field is still skipped, and a number is left to the server, as in
// binary Protobuf.
func checkEnumNames(data []byte, check func(value any) error) error {
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.UseNumber()
	var value any
	if decoder.Decode(&value) != nil {
		return nil // protojson took it: nothing here to check
	}
	return check(value)
}

// checkMessageEnums checks the fields of value, a message of type message as JSON, at path.
// The well-known types (google.protobuf) have JSON forms of their own, which protojson checks.
func checkMessageEnums(value any, message protoreflect.MessageDescriptor, path string) error {
	object, ok := value.(map[string]any)
	if !ok || message.FullName().Parent() == "google.protobuf" {
		return nil
	}
	fields := message.Fields()
	for _, key := range slices.Sorted(maps.Keys(object)) { // the first error in a stable order
		field := fields.ByJSONName(key)
		if field == nil {
			field = fields.ByTextName(key)
		}
		if field == nil {
			continue // an unknown field: ignored
		}
		where := key
		if path != "" {
			where = path + "." + key
		}
		if err := checkFieldEnums(object[key], field, where); err != nil {
			return err
		}
	}
	return nil
}

// checkFieldEnums checks value, the JSON of field (a list or a map as a whole), at path.
func checkFieldEnums(value any, field protoreflect.FieldDescriptor, path string) error {
	switch {
	case field.IsList():
		items, _ := value.([]any)
		for i, item := range items {
			if err := checkValueEnums(item, field, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case field.IsMap():
		entries, _ := value.(map[string]any)
		for _, key := range slices.Sorted(maps.Keys(entries)) {
			if err := checkValueEnums(entries[key], field.MapValue(), fmt.Sprintf("%s[%q]", path, key)); err != nil {
				return err
			}
		}
	default:
		return checkValueEnums(value, field, path)
	}
	return nil
}

// checkValueEnums checks one value of field: an enum's name, or a message's fields.
func checkValueEnums(value any, field protoreflect.FieldDescriptor, path string) error {
	switch field.Kind() {
	case protoreflect.EnumKind:
		name, ok := value.(string)
		if ok && field.Enum().Values().ByName(protoreflect.Name(name)) == nil {
			return fmt.Errorf("%s: %s has no value named %q", path, field.Enum().FullName(), name)
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return checkMessageEnums(value, field.Message(), path)
	}
	return nil
}

// invalidRequestError is invalidRequest as the transcoder's handlers return it.
func invalidRequestError(err error) *connect.Error {
	connectErr := connect.NewError(connect.CodeInvalidArgument, err)
	if detail, detailErr := connect.NewErrorDetail(&errdetails.ErrorInfo{Reason: "INVALID_REQUEST", Domain: errorDomain}); detailErr == nil {
		connectErr.AddDetail(detail)
	}
	return connectErr
}

// restRoute is one google.api.http rule of the service: what the gateway needs of it to check
// a REST request's query parameters before the transcoder reads them.
type restRoute struct {
	httpMethod string
	// segments is the path template, one entry a segment: a literal, "*" (any one segment) or
	// "**" (the rest of the path).
	segments []string
	verb     string
	request  protoreflect.MessageDescriptor
	// bound holds the field paths the path sets.
	bound [][]protoreflect.FieldDescriptor
	// body is "" (no body), "*" (the whole request) or the field the body is.
	body string
	// method is the RPC's name; streaming, whether it streams its responses.
	method    string
	streaming bool
}

// restRoutes reads the google.api.http rules of every method of the service.
func restRoutes(service protoreflect.ServiceDescriptor) ([]*restRoute, error) {
	var routes []*restRoute
	methods := service.Methods()
	for i := range methods.Len() {
		method := methods.Get(i)
		rule, _ := proto.GetExtension(method.Options(), annotations.E_Http).(*annotations.HttpRule)
		if rule == nil {
			continue
		}
		for _, r := range append([]*annotations.HttpRule{rule}, rule.GetAdditionalBindings()...) {
			route, err := newRESTRoute(r, method.Input())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", method.FullName(), err)
			}
			route.method, route.streaming = string(method.Name()), method.IsStreamingServer()
			routes = append(routes, route)
		}
	}
	return routes, nil
}

func newRESTRoute(rule *annotations.HttpRule, request protoreflect.MessageDescriptor) (*restRoute, error) {
	route := &restRoute{request: request, body: rule.GetBody()}
	var template string
	switch pattern := rule.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		route.httpMethod, template = http.MethodGet, pattern.Get
	case *annotations.HttpRule_Put:
		route.httpMethod, template = http.MethodPut, pattern.Put
	case *annotations.HttpRule_Post:
		route.httpMethod, template = http.MethodPost, pattern.Post
	case *annotations.HttpRule_Delete:
		route.httpMethod, template = http.MethodDelete, pattern.Delete
	case *annotations.HttpRule_Patch:
		route.httpMethod, template = http.MethodPatch, pattern.Patch
	case *annotations.HttpRule_Custom:
		route.httpMethod, template = pattern.Custom.GetKind(), pattern.Custom.GetPath()
	default:
		return nil, fmt.Errorf("a google.api.http rule without a pattern")
	}
	if !strings.HasPrefix(template, "/") {
		return nil, fmt.Errorf("path template %q does not start with /", template)
	}
	rest := template[1:]
	// The verb follows the last ':' that is not within a variable.
	if i := strings.LastIndexByte(rest, ':'); i > strings.LastIndexByte(rest, '}') {
		rest, route.verb = rest[:i], rest[i+1:]
	}
	for rest != "" {
		if rest[0] == '{' {
			end := strings.IndexByte(rest, '}')
			if end < 0 {
				return nil, fmt.Errorf("path template %q: unclosed {", template)
			}
			variable, pattern, found := strings.Cut(rest[1:end], "=")
			if !found {
				pattern = "*"
			}
			fields, err := resolveFieldPath(request, variable)
			if err != nil {
				return nil, fmt.Errorf("path template %q: %w", template, err)
			}
			route.bound = append(route.bound, fields)
			route.segments = append(route.segments, strings.Split(pattern, "/")...)
			rest = rest[end+1:]
		} else {
			end := strings.IndexByte(rest, '/')
			if end < 0 {
				end = len(rest)
			}
			route.segments = append(route.segments, rest[:end])
			rest = rest[end:]
		}
		rest = strings.TrimPrefix(rest, "/")
	}
	return route, nil
}

// matches reports whether a request of method to path takes this route, as vanguard's router
// matches it: the verb follows the first ':' of the last segment.
func (route *restRoute) matches(method, path string) bool {
	if method != route.httpMethod || !strings.HasPrefix(path, "/") {
		return false
	}
	parts := strings.Split(path[1:], "/")
	var verb string
	if last, i := parts[len(parts)-1], strings.IndexByte(parts[len(parts)-1], ':'); i >= 0 {
		parts[len(parts)-1], verb = last[:i], last[i+1:]
	}
	if verb != route.verb {
		return false
	}
	for i, segment := range route.segments {
		if segment == "**" {
			return true
		}
		if i >= len(parts) || (segment != "*" && segment != parts[i]) {
			return false
		}
	}
	return len(parts) == len(route.segments)
}

// checkQuery refuses what the transcoder would take wrongly from a request's query: a
// parameter that names no field of the request (which the transcoder answers with UNKNOWN,
// HTTP 500), one that names a field the path or the body sets (which it would silently
// override: GET /v1/tables/A?name=tables/B read table B), a field given more than once that
// holds one value, and a value that does not parse as its field's type.
func (route *restRoute) checkQuery(query url.Values) error {
	for name, values := range query {
		fields, err := resolveFieldPath(route.request, name)
		if err != nil {
			return fmt.Errorf("query parameter %q: %w", name, err)
		}
		if route.body == "*" {
			return fmt.Errorf("query parameter %q: this call takes the whole request in its body", name)
		}
		if route.body != "" && string(fields[0].Name()) == route.body {
			return fmt.Errorf("query parameter %q: the body is the %s", name, route.body)
		}
		for _, bound := range route.bound {
			if isPrefix(bound, fields) || isPrefix(fields, bound) {
				return fmt.Errorf("query parameter %q: the path sets %s", name, fieldPathName(bound))
			}
		}
		leaf := fields[len(fields)-1]
		if leaf.IsMap() || (leaf.Kind() == protoreflect.MessageKind && !strings.HasPrefix(string(leaf.Message().FullName()), "google.protobuf.")) {
			return fmt.Errorf("query parameter %q: %s is not a scalar field", name, leaf.FullName())
		}
		if !leaf.IsList() && len(values) > 1 {
			return fmt.Errorf("query parameter %q: given %d times", name, len(values))
		}
		for _, value := range values {
			if err := checkParameterValue(leaf, value); err != nil {
				return fmt.Errorf("query parameter %q: %q is not a valid %s: %w", name, value, leaf.Kind(), err)
			}
		}
	}
	return nil
}

// resolveFieldPath finds the fields of a dotted path ("page_size", "pageSize", "table.name")
// in a message, by JSON name first and then proto name, as vanguard does.
func resolveFieldPath(message protoreflect.MessageDescriptor, path string) ([]protoreflect.FieldDescriptor, error) {
	var fields []protoreflect.FieldDescriptor
	for part := range strings.SplitSeq(path, ".") {
		if message == nil {
			return nil, fmt.Errorf("%s has no fields", fields[len(fields)-1].FullName())
		}
		field := message.Fields().ByJSONName(part)
		if field == nil {
			field = message.Fields().ByName(protoreflect.Name(part))
		}
		if field == nil {
			return nil, fmt.Errorf("%s has no field %q", message.FullName(), part)
		}
		fields = append(fields, field)
		message = nil
		if field.Kind() == protoreflect.MessageKind && !field.IsList() && !field.IsMap() {
			message = field.Message()
		}
	}
	return fields, nil
}

func isPrefix(prefix, fields []protoreflect.FieldDescriptor) bool {
	if len(prefix) > len(fields) {
		return false
	}
	for i := range prefix {
		if prefix[i] != fields[i] {
			return false
		}
	}
	return true
}

func fieldPathName(fields []protoreflect.FieldDescriptor) string {
	names := make([]string, len(fields))
	for i, field := range fields {
		names[i] = field.JSONName()
	}
	return strings.Join(names, ".")
}

// checkParameterValue parses a query parameter's value as vanguard does (numbers and booleans
// as JSON, enums by name or number, bytes as base64), for a scalar field. The well-known
// message types are left to vanguard.
func checkParameterValue(field protoreflect.FieldDescriptor, value string) error {
	data := []byte(value)
	var err error
	switch field.Kind() {
	case protoreflect.BoolKind:
		err = json.Unmarshal(data, new(bool))
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		err = json.Unmarshal(data, new(int32))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		err = json.Unmarshal(data, new(int64))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		err = json.Unmarshal(data, new(uint32))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		err = json.Unmarshal(data, new(uint64))
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		if value != "NaN" && value != "Infinity" && value != "-Infinity" {
			err = json.Unmarshal(data, new(float64))
		}
	case protoreflect.StringKind:
		if !utf8.ValidString(value) {
			err = errors.New("not UTF-8")
		}
	case protoreflect.BytesKind:
		encoding := base64.StdEncoding
		if strings.ContainsAny(value, "-_") {
			encoding = base64.URLEncoding
		}
		if len(value)%4 != 0 {
			encoding = encoding.WithPadding(base64.NoPadding)
		}
		_, err = encoding.DecodeString(value)
	case protoreflect.EnumKind:
		if json.Unmarshal(data, new(int32)) != nil && field.Enum().Values().ByName(protoreflect.Name(value)) == nil {
			err = fmt.Errorf("%s has no value %s", field.Enum().FullName(), value)
		}
	}
	return err
}

// restPrefix begins every REST path of the service (google.api.http), and no other protocol's.
const restPrefix = "/v1/"

// withRESTChecks answers, before the transcoder sees it, a REST request that it would refuse in
// plain text or take wrongly, with the google.rpc.Status as JSON, as the transcoder writes
// errors:
//   - a query the route cannot take, a path that is not UTF-8, a body where the route takes none,
//     and no body where the body is one field of the request (CreateTable's table; "{}" is a
//     table of defaults): INVALID_ARGUMENT / INVALID_REQUEST, HTTP 400;
//   - a body that is not sent as JSON (curl -d sends a form's type), and a streaming call (which
//     has no REST form): INVALID_REQUEST, HTTP 415;
//   - a path under /v1/ that names no call: NOT_FOUND / NO_SUCH_CALL, HTTP 404, or HTTP 405 with
//     Allow when the path is a call's with another method.
func withRESTChecks(routes []*restRoute, logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var route *restRoute
		for _, candidate := range routes {
			if candidate.matches(r.Method, r.URL.Path) {
				route = candidate
				break
			}
		}
		if route == nil {
			if strings.HasPrefix(r.URL.Path, restPrefix) {
				refuseRoute(w, r, routes, logger)
				return
			}
			next.ServeHTTP(w, r) // gRPC, gRPC-Web and Connect
			return
		}
		httpStatus := http.StatusBadRequest
		err := route.checkQuery(r.URL.Query())
		if err == nil && !utf8.ValidString(r.URL.Path) {
			// A path variable is a string field (a table's name), which must be UTF-8; the
			// literal parts of a route are ASCII.
			err = errors.New("the path is not UTF-8")
		}
		if err == nil && route.body == "" && r.ContentLength != 0 { // -1: chunked
			err = errors.New("this call takes no body: its fields go in the query")
		}
		if err == nil && route.body != "" && route.body != "*" && !hasBody(r) {
			err = fmt.Errorf("the body is the request's %s: send it as JSON ({} for every default)", route.body)
		}
		if err == nil && route.streaming {
			// vanguard streams over REST only google.api.HttpBody responses, and answers 415 in
			// plain text otherwise.
			httpStatus = http.StatusUnsupportedMediaType
			err = fmt.Errorf("%s has no REST form: call it with gRPC-Web or Connect", route.method)
		}
		if err == nil && route.body != "" && r.ContentLength != 0 {
			if given := r.Header.Get("Content-Type"); isJSON(given) {
				// The one spelling vanguard takes (it compares the header as a string).
				r.Header.Set("Content-Type", "application/json")
			} else {
				httpStatus = http.StatusUnsupportedMediaType
				err = fmt.Errorf("send the body as JSON in UTF-8, with Content-Type: application/json (not %q)", given)
			}
		}
		if err != nil {
			logger.Info("refused a REST request", "method", r.Method, "path", r.URL.Path, "peer", r.RemoteAddr, "error", err)
			writeRESTError(w, httpStatus, status.Convert(invalidRequest(err.Error())))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isJSON reports whether a REST body's Content-Type is JSON in UTF-8, the one body the
// transcoder takes: application/json in any spelling (any case, with or without a UTF-8
// charset), or none at all, which the transcoder takes for JSON too.
func isJSON(contentType string) bool {
	if contentType == "" {
		return true
	}
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType != "application/json" {
		return false
	}
	charset, given := params["charset"]
	return !given || strings.EqualFold(charset, "utf-8")
}

// hasBody reports whether a request has a body of at least one byte. A chunked one
// (ContentLength -1) may still be empty: its first byte is read ahead, under the request's read
// deadline, and put back for the transcoder.
func hasBody(r *http.Request) bool {
	if r.ContentLength >= 0 {
		return r.ContentLength > 0
	}
	reader := bufio.NewReader(r.Body)
	_, err := reader.Peek(1)
	r.Body = struct {
		io.Reader
		io.Closer
	}{reader, r.Body}
	return !errors.Is(err, io.EOF)
}

// refuseRoute answers a REST request that no route takes: 405 with the methods the path has,
// when it has some, else 404; NOT_FOUND / NO_SUCH_CALL either way.
func refuseRoute(w http.ResponseWriter, r *http.Request, routes []*restRoute, logger *slog.Logger) {
	var allowed []string
	for _, route := range routes {
		if route.matches(route.httpMethod, r.URL.Path) && !slices.Contains(allowed, route.httpMethod) {
			allowed = append(allowed, route.httpMethod)
		}
	}
	httpStatus, message := http.StatusNotFound, "no call of the API has the path "+r.URL.Path
	if len(allowed) > 0 {
		slices.Sort(allowed)
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		httpStatus, message = http.StatusMethodNotAllowed, fmt.Sprintf("%s takes %s, not %s", r.URL.Path, strings.Join(allowed, " or "), r.Method)
	}
	logger.Info("refused a REST request", "method", r.Method, "path", r.URL.Path, "peer", r.RemoteAddr, "error", message)
	writeRESTError(w, httpStatus, status.Convert(withErrorInfo(codes.NotFound, "NO_SUCH_CALL", message)))
}

func writeRESTError(w http.ResponseWriter, httpStatus int, st *status.Status) {
	data, err := protojson.Marshal(st.Proto())
	if err != nil {
		data = []byte(`{"code":13,"message":"cannot write the error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus)
	_, _ = w.Write(data)
}
