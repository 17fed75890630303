package io.sluice.broker.command;

import io.sluice.protocol.codecs.ErrorCode;
import io.sluice.protocol.message.ErrorResponseWriter;
import io.sluice.protocol.transport.RequestHandler;
import io.sluice.protocol.transport.ResponseChannel;
import org.agrona.DirectBuffer;

/**
 * The command port's handler from the moment it listens (issue 30): a broker opens its port before it recovers its
 * Raft groups, and until {@link #open} every request is answered {@code UNAVAILABLE} ("broker 1 is starting: ..."),
 * the retriable answer the gateway already treats as "try again" (a topology poll sees the broker as down, a pair of
 * an exporting operation fails, an append is retried elsewhere). Nothing is served from a replica that is not
 * recovered, so nothing is promised early. Then every request goes to the broker's {@link CommandApi}.
 * <p>
 * States: {@code STARTING} (answers UNAVAILABLE, naming the step in progress) → {@code SERVING}. Thread-safe: the
 * handler and the step are volatile.
 */
public final class StartupGate implements RequestHandler
{
    private final int brokerId;
    private volatile RequestHandler serving;
    private volatile String step = "setting up";

    public StartupGate(final int brokerId)
    {
        this.brokerId = brokerId;
    }

    /** Names what the broker is doing now, for the answers while starting ("recovering 65 Raft groups"). */
    public void step(final String step)
    {
        this.step = step;
    }

    /** From now on every request goes to {@code handler}. */
    public void open(final RequestHandler handler)
    {
        this.serving = handler;
    }

    /** Whether requests are served (not answered UNAVAILABLE for a start in progress). */
    public boolean isOpen()
    {
        return serving != null;
    }

    @Override
    public void onRequest(final DirectBuffer buffer, final int offset, final int length, final ResponseChannel response)
    {
        final RequestHandler handler = serving;
        if (handler != null)
        {
            handler.onRequest(buffer, offset, length, response);
            return;
        }
        response.respond(ErrorResponseWriter.of(ErrorCode.UNAVAILABLE, 0, ErrorResponseWriter.NO_LEADER,
            startingMessage(brokerId, step)));
    }

    /** The answer's text while starting; the gateway shows it as the broker's unreachable reason. */
    public static String startingMessage(final int brokerId, final String step)
    {
        return "broker " + brokerId + " is starting (" + step + "): try again shortly";
    }
}
