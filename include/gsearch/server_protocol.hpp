#pragma once
/// \file
/// The search server's socket protocol (issue 22; docs/design.md, "The socket protocol"): the
/// bytes of a request and of a response, and the checks of a request's header, as pure functions
/// (no sockets: tests/server_socket_test.cpp tests them alone). server_socket.hpp speaks it over
/// a Unix-domain socket or 127.0.0.1; python/gsearch/_client.py is a second implementation.
///
/// Little-endian; per connection, requests and their responses in order (a client may send many
/// requests on one connection, and a request before the answer to the last one is read):
///
///     request   magic "GSRQ" | version u16 = 1 | op u16 (1 search, 16 ring, 17 doorbell)
///               | dtype u8 (gsearch::dtype: 0 int32, 1 uint32, 2 int64, 3 uint64, 4 float32,
///               5 float64) | side u8 (gsearch::side: 0 left, 1 right, 2 pred) | reserved u16 = 0
///               | count u64 | count elements of dtype                       (20-byte header)
///     response  magic "GSRS" | status u32 | then, status 0: count u64 | count int64 results
///                                                 else:      length u32 | length bytes of UTF-8
///
/// A connection of the Unix-domain socket may ask for a shared-memory ring (op 16, count 0, the
/// dtype of its queries): the answer is an ok response whose count is the ring's capacity in
/// queries, the ring's memfd passed with it (SCM_RIGHTS). Requests of up to that many queries of
/// that dtype then go through the ring (socket_ring.hpp: no system call while the server's worker
/// watches the ring); a doorbell (op 17, count 0, no answer on the socket) tells the server that
/// the ring holds a request when no worker watches it. Larger requests still go over the socket.
/// A server that offers no ring (TCP, socket_options::ring_queries 0, its max_rings open, a ring
/// open on the connection already) answers ok with capacity 0 and no descriptor: the client goes
/// on over the socket. An error answer is the request's (a wrong dtype) or the connection's (busy).
///
/// Statuses: 0 ok, 1 malformed, 2 wrong dtype (not the server's keys' dtype), 3 too large (more
/// queries than the server's max_queries, or more bytes than its whole memory budget), 4 shut
/// down, 5 failed (the server's loop failed: on the GPU a CUDA error poisons the context; every
/// later request fails too: restart the server), 6 busy (the server cannot take this connection or
/// request now: too many connections, or no memory for it; the server is healthy: try again
/// later).
/// The header is checked before the body is read (check_request). When the rest of the stream
/// can no longer be trusted (a bad magic, version, op or dtype code, or a request too large, whose
/// body the server refuses to read) the server answers and closes the connection; a request whose
/// framing is intact (a wrong dtype, an unknown side, a non-zero reserved field) has its body
/// read and dropped, and the connection stays open.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "gsearch/core/algorithm.hpp"  // side
#include "gsearch/core/dtype.hpp"
#include "gsearch/core/server_ring.hpp"  // server_op

namespace gsearch::protocol {

inline constexpr std::array<uint8_t, 4> request_magic = {'G', 'S', 'R', 'Q'};
inline constexpr std::array<uint8_t, 4> response_magic = {'G', 'S', 'R', 'S'};
inline constexpr uint16_t version = 1;

inline constexpr size_t request_header_bytes = 20;   ///< magic, version, op, dtype, side, reserved, count
inline constexpr size_t response_head_bytes = 8;     ///< magic, status (then the count or the length)
inline constexpr size_t ok_header_bytes = 16;        ///< head, count u64 (the results follow, 8-aligned)
inline constexpr size_t error_header_bytes = 12;     ///< head, length u32 (the message follows)
inline constexpr uint32_t max_message_bytes = 4096;  ///< a longer message is cut (encode_error)
/// The default limit of a request's queries (socket_options::max_queries): 32 MB of int64 queries
/// and as many of results.
inline constexpr int64_t default_max_queries = int64_t(1) << 22;
/// The largest max_queries a server takes (so that a count times an itemsize never overflows).
inline constexpr int64_t max_queries_limit = int64_t(1) << 32;

/// A request's op (its header's op field): a search (core::server_op::search), the ring's
/// opening, the ring's doorbell.
inline constexpr uint16_t op_search = uint16_t(core::server_op::search);
inline constexpr uint16_t op_ring = 16;
inline constexpr uint16_t op_doorbell = 17;

enum class status : uint32_t {
  ok = 0,
  malformed = 1,
  wrong_dtype = 2,
  too_large = 3,
  shut_down = 4,
  failed = 5,
  busy = 6,
};

/// "ok", "malformed", "wrong dtype", "too large", "shut down", "failed", "busy" ("status N"
/// otherwise).
inline std::string to_string(status s) {
  switch (s) {
    case status::ok: return "ok";
    case status::malformed: return "malformed";
    case status::wrong_dtype: return "wrong dtype";
    case status::too_large: return "too large";
    case status::shut_down: return "shut down";
    case status::failed: return "failed";
    case status::busy: return "busy";
  }
  return "status " + std::to_string(uint32_t(s));
}

// ---- little-endian fields ---------------------------------------------------------------------

template <class U>
void put_le(uint8_t* p, U v) {
  for (size_t i = 0; i < sizeof(U); ++i) p[i] = uint8_t(uint64_t(v) >> (8 * i));
}
template <class U>
U get_le(const uint8_t* p) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(U); ++i) v |= uint64_t(p[i]) << (8 * i);
  return U(v);
}

// ---- requests ---------------------------------------------------------------------------------

/// A request header's fields as they are on the wire (not yet checked).
struct request_header {
  std::array<uint8_t, 4> magic = request_magic;
  uint16_t version = protocol::version;
  uint16_t op = op_search;
  uint8_t dtype = 0;
  uint8_t side = 0;
  uint16_t reserved = 0;
  uint64_t count = 0;
};

/// The header of a search of `count` queries of type t on side s.
inline request_header search_header(gsearch::dtype t, gsearch::side s, uint64_t count) {
  request_header h;
  h.dtype = uint8_t(t);
  h.side = uint8_t(s);
  h.count = count;
  return h;
}

inline std::array<uint8_t, request_header_bytes> encode(const request_header& h) {
  std::array<uint8_t, request_header_bytes> b{};
  for (size_t i = 0; i < 4; ++i) b[i] = h.magic[i];
  put_le<uint16_t>(&b[4], h.version);
  put_le<uint16_t>(&b[6], h.op);
  b[8] = h.dtype;
  b[9] = h.side;
  put_le<uint16_t>(&b[10], h.reserved);
  put_le<uint64_t>(&b[12], h.count);
  return b;
}

inline request_header decode_request(const uint8_t* b) {
  request_header h;
  for (size_t i = 0; i < 4; ++i) h.magic[i] = b[i];
  h.version = get_le<uint16_t>(&b[4]);
  h.op = get_le<uint16_t>(&b[6]);
  h.dtype = b[8];
  h.side = b[9];
  h.reserved = get_le<uint16_t>(&b[10]);
  h.count = get_le<uint64_t>(&b[12]);
  return h;
}

/// The header of the ring's opening (op_ring) or its doorbell (op_doorbell), for queries of type t.
inline request_header ring_header(uint16_t op, gsearch::dtype t) {
  request_header h;
  h.op = op;
  h.dtype = uint8_t(t);
  return h;
}

/// What the server does with a request, from its header alone (check_request).
struct verdict {
  status code = status::ok;
  std::string message;      ///< why, when code is not ok
  bool close = false;       ///< answer, then close the connection (the stream cannot be trusted)
  uint64_t body_bytes = 0;  ///< the body's length: read it (ok), or read and drop it (an error kept)
  gsearch::dtype type = gsearch::dtype::int32;
  gsearch::side side = gsearch::side::left;
  uint64_t count = 0;
  uint16_t op = op_search;
};

/// Checks a request header against a server of `keys` with at most max_queries a request, in
/// this order: magic, version, op, dtype code (malformed, close), count (too large, close; for
/// the ring's ops, not 0: malformed, close), side, reserved (malformed, kept), dtype (wrong
/// dtype, kept).
inline verdict check_request(const request_header& h, gsearch::dtype keys, int64_t max_queries) {
  verdict v;
  const auto fail = [&](status s, std::string why, bool close) {
    v.code = s;
    v.message = std::move(why);
    v.close = close;
    return v;
  };
  if (h.magic != request_magic) return fail(status::malformed, "not a gsearch request (its magic is not GSRQ)", true);
  if (h.version != protocol::version)
    return fail(status::malformed,
                "protocol version " + std::to_string(h.version) + " is not supported (this server speaks version " +
                    std::to_string(protocol::version) + ")",
                true);
  if (h.op != op_search && h.op != op_ring && h.op != op_doorbell)
    return fail(status::malformed,
                "op " + std::to_string(h.op) + " is not served (1: search, 16: ring, 17: doorbell)", true);
  v.op = h.op;
  if (h.dtype >= std::size(all_dtypes))
    return fail(status::malformed,
                "dtype code " + std::to_string(h.dtype) + " is not a gsearch dtype (0 to " +
                    std::to_string(std::size(all_dtypes) - 1) + ": " + std::string(key_type_names) + ")",
                true);
  v.type = gsearch::dtype(h.dtype);
  if (h.op != op_search && h.count != 0)
    return fail(status::malformed, "a ring or doorbell request has no queries (its count is not 0)", true);
  v.count = h.count;
  max_queries = std::min(max_queries, max_queries_limit);  // count x itemsize cannot overflow below it
  if (max_queries < 0 || h.count > uint64_t(max_queries))
    return fail(status::too_large,
                std::to_string(h.count) + " queries in one request; this server takes at most " +
                    std::to_string(max_queries) + " (split the request)",
                true);
  v.body_bytes = h.count * uint64_t(itemsize(v.type));
  if (h.side > uint8_t(gsearch::side::pred))
    return fail(status::malformed, "side code " + std::to_string(h.side) + " is not a side (0 left, 1 right, 2 pred)",
                false);
  v.side = gsearch::side(h.side);
  if (h.reserved != 0) return fail(status::malformed, "the reserved field is not 0", false);
  if (v.type != keys)
    return fail(status::wrong_dtype,
                "queries of dtype " + std::string(name(v.type)) + " for keys of dtype " + std::string(name(keys)),
                false);
  return v;
}

// ---- responses --------------------------------------------------------------------------------

/// The header of an ok response with `count` results (the int64 results follow).
inline std::array<uint8_t, ok_header_bytes> encode_ok_header(uint64_t count) {
  std::array<uint8_t, ok_header_bytes> b{};
  for (size_t i = 0; i < 4; ++i) b[i] = response_magic[i];
  put_le<uint32_t>(&b[4], uint32_t(status::ok));
  put_le<uint64_t>(&b[8], count);
  return b;
}

/// A whole error response: head, length, the message (cut to max_message_bytes, at a UTF-8
/// character boundary).
inline std::string encode_error(status s, std::string_view message) {
  if (message.size() > max_message_bytes) {
    size_t n = max_message_bytes;
    while (n > 0 && (uint8_t(message[n]) & 0xC0) == 0x80) --n;  // not inside a character
    message = message.substr(0, n);
  }
  std::string b(error_header_bytes + message.size(), '\0');
  uint8_t* p = reinterpret_cast<uint8_t*>(b.data());
  for (size_t i = 0; i < 4; ++i) p[i] = response_magic[i];
  put_le<uint32_t>(p + 4, uint32_t(s));
  put_le<uint32_t>(p + 8, uint32_t(message.size()));
  b.replace(error_header_bytes, message.size(), message);
  return b;
}

/// A response's first 8 bytes: whether the magic is right, and the status.
struct response_head {
  bool magic_ok = false;
  status code = status::ok;
};
inline response_head decode_response_head(const uint8_t* b) {
  response_head h;
  h.magic_ok = b[0] == response_magic[0] && b[1] == response_magic[1] && b[2] == response_magic[2] &&
               b[3] == response_magic[3];
  h.code = status(get_le<uint32_t>(b + 4));
  return h;
}

}  // namespace gsearch::protocol
