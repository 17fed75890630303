package io.sluice.dist.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.apache.ratis.protocol.RaftGroupMemberId;
import org.apache.ratis.protocol.RaftGroupId;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.LeaderNotReadyException;
import org.apache.ratis.protocol.exceptions.NotLeaderException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletionException;

import static org.assertj.core.api.Assertions.assertThat;

/** Normal election noise from Ratis is one INFO line, not an ERROR stack trace; other Ratis errors stay. */
class ElectionNoiseFilterTest
{
    private final LoggerContext context = new LoggerContext();
    private final ListAppender<ILoggingEvent> events = new ListAppender<>();
    private Logger ratis;

    @BeforeEach
    void configure()
    {
        final ElectionNoiseFilter filter = new ElectionNoiseFilter();
        filter.setContext(context);
        filter.start();
        context.addTurboFilter(filter);
        events.setContext(context);
        events.start();
        final Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.INFO);
        root.addAppender(events);
        ratis = context.getLogger("org.apache.ratis.server.impl.RaftServerImpl");
        ratis.setLevel(Level.ERROR);
        // The filter logs through SLF4J's factory; point the test at its own context.
    }

    @Test
    void aNotLeaderExceptionAtErrorIsDeniedAndAnOtherErrorIsKept()
    {
        final RaftGroupMemberId member = RaftGroupMemberId.valueOf(RaftPeerId.valueOf("p0"), RaftGroupId.randomId());
        final NotLeaderException notLeader = new NotLeaderException(member, null, List.of());

        assertThat(new ElectionNoiseFilter().decide(null, ratis, Level.ERROR, "{}: failed {}", new Object[]{"p0", "req", notLeader}, null))
            .isEqualTo(ch.qos.logback.core.spi.FilterReply.DENY);
        assertThat(new ElectionNoiseFilter().decide(null, ratis, Level.ERROR, "failed", null,
            new CompletionException(new LeaderNotReadyException(member))))
            .isEqualTo(ch.qos.logback.core.spi.FilterReply.DENY);
        assertThat(new ElectionNoiseFilter().decide(null, ratis, Level.ERROR, "failed", null, new IOException("disk")))
            .isEqualTo(ch.qos.logback.core.spi.FilterReply.NEUTRAL);
        assertThat(new ElectionNoiseFilter().decide(null, context.getLogger("io.sluice.broker.Broker"), Level.ERROR,
            "failed", null, notLeader)).isEqualTo(ch.qos.logback.core.spi.FilterReply.NEUTRAL);
    }

    @Test
    void inALoggerContextOnlyTheOtherErrorIsLoggedAtError()
    {
        final RaftGroupMemberId member = RaftGroupMemberId.valueOf(RaftPeerId.valueOf("p0"), RaftGroupId.randomId());

        ratis.error("{}: request failed", "p0", new NotLeaderException(member, null, List.of()));
        ratis.error("{}: request failed", "p0", new LeaderNotReadyException(member));
        ratis.error("{}: storage failed", "p0", new IOException("disk"));

        assertThat(events.list).extracting(ILoggingEvent::getLevel).containsExactly(Level.ERROR);
        assertThat(events.list.get(0).getFormattedMessage()).isEqualTo("p0: storage failed");
    }
}
