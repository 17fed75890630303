package io.sluice.dist.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.LoggerFactory;
import org.slf4j.Marker;
import org.slf4j.helpers.MessageFormatter;

import java.util.Set;

/**
 * Ratis logs a request that reached a follower, or a leader still applying its first entry, as an ERROR or WARN
 * with a stack trace: {@code NotLeaderException} and {@code LeaderNotReadyException}. During elections (every
 * start, every leader change) that is normal, and the client retries at the leader. This turns such an event into
 * one INFO line without a stack trace, under {@value #LOGGER}; every other Ratis event is left as it is.
 */
public final class ElectionNoiseFilter extends TurboFilter
{
    public static final String LOGGER = "io.sluice.raft.election";

    private static final Set<String> ELECTION_EXCEPTIONS = Set.of(
        "org.apache.ratis.protocol.exceptions.NotLeaderException",
        "org.apache.ratis.protocol.exceptions.LeaderNotReadyException");

    @Override
    public FilterReply decide(final Marker marker, final Logger logger, final Level level, final String format,
        final Object[] params, final Throwable t)
    {
        if (level == null || !level.isGreaterOrEqual(Level.WARN) || !logger.getName().startsWith("org.apache.ratis"))
        {
            return FilterReply.NEUTRAL;
        }
        final Throwable thrown = t != null ? t : MessageFormatter.getThrowableCandidate(params);
        final Throwable election = electionCause(thrown);
        if (election == null)
        {
            return FilterReply.NEUTRAL;
        }
        final org.slf4j.Logger info = LoggerFactory.getLogger(LOGGER);
        if (info.isInfoEnabled())
        {
            info.info("{}: {} ({}, normal during elections)", logger.getName().substring(logger.getName().lastIndexOf('.') + 1),
                MessageFormatter.basicArrayFormat(format, params), election.getClass().getSimpleName());
        }
        return FilterReply.DENY;
    }

    private static Throwable electionCause(final Throwable thrown)
    {
        for (Throwable cause = thrown; cause != null; cause = cause.getCause() == cause ? null : cause.getCause())
        {
            if (ELECTION_EXCEPTIONS.contains(cause.getClass().getName()))
            {
                return cause;
            }
        }
        return null;
    }
}
