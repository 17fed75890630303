/**
 * Request/response transport between gateway and brokers: Netty 4.2 (epoll when available, NIO otherwise),
 * one TCP connection per peer, many requests in flight on it, answers matched by correlation id.
 * <p>
 * Wire format: see {@link io.sluice.protocol.transport.FrameDescriptor} (int32 LE length, int64 LE
 * correlation id, SBE message). Frames announcing more than {@code TransportConfig.maxFrameLength}, or a
 * length below the correlation id, close that connection only.
 * <p>
 * Serving: {@link io.sluice.protocol.transport.TransportServer#start} with a
 * {@link io.sluice.protocol.transport.RequestHandler}; the handler runs on an I/O thread, sees the
 * message through a view valid only during the call, and answers once through the
 * {@link io.sluice.protocol.transport.ResponseChannel} from any thread. A handler that throws before
 * answering has an INTERNAL_ERROR {@code ErrorResponse} sent for it.
 * <p>
 * Calling: {@link io.sluice.protocol.transport.TransportClient#send} returns a future of the response
 * bytes (owned by the caller) that fails with {@link io.sluice.protocol.transport.RequestTimeoutException}
 * at its deadline, or {@link io.sluice.protocol.transport.PeerUnreachableException} as soon as the peer
 * refuses or drops the connection; after that, sends to the peer fail fast for a doubling backoff, then
 * the next send reconnects. Futures complete on an I/O thread: do not block in their callbacks.
 */
package io.sluice.protocol.transport;
