package io.sluice.qa.control;

import io.sluice.qa.cluster.ExportingControlAnswer;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 30: a broker restarted into a running cluster (separate JVMs, 3 brokers × 12 partitions, RF 3) can be paused as
 * soon as the gateway's {@code GET /actuator/partitions} says it is reachable: the pause of every pair answers 200. The
 * time from the broker's process start to reachable is printed; only a generous bound is asserted (performance is the
 * benchmarks' business).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class PauseRightAfterBrokerRestartIT
{
    private static final int RESTARTED = 1;
    private static final Duration GENEROUS = SluiceCluster.scaled(Duration.ofSeconds(120));

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    private SluiceCluster cluster;

    @BeforeAll
    void startCluster()
    {
        cluster = RUN.cluster("restart-then-pause", (builder) -> builder.brokers(3).partitions(12).replicationFactor(3));
        cluster.start();
        cluster.awaitReady();
        cluster.awaitLeaders();
    }

    @AfterAll
    void resume()
    {
        if (cluster != null && cluster.gateway().isAlive())
        {
            cluster.log("resume at the end: " + cluster.client().resume());
        }
    }

    @Test
    void aRestartedBrokerIsPausableAsSoonAsTheGatewaySeesItReachable() throws InterruptedException
    {
        cluster.stopBroker(RESTARTED);
        awaitReachable(false, GENEROUS);

        final long startNs = System.nanoTime();
        cluster.startBroker(RESTARTED);
        awaitReachable(true, GENEROUS);
        final Duration reachable = Duration.ofNanos(System.nanoTime() - startNs);
        final ExportingControlAnswer pause = cluster.client().pause();
        cluster.log("broker " + RESTARTED + " reachable " + reachable.toMillis() + " ms after its process started; " +
            "the pause right after took " + pause.http().elapsed().toMillis() + " ms");

        assertThat(pause.status()).as(pause.toString()).isEqualTo(200);
        assertThat(pause.result()).isEqualTo("SUCCEEDED");
        assertThat(pause.pairs()).isEqualTo(cluster.allPairs());
        assertThat(reachable).as("process start to reachable").isLessThan(GENEROUS);
    }

    /** Polls {@code GET /actuator/partitions} every 20 ms until the restarted broker's {@code reachable} is {@code wanted}. */
    private void awaitReachable(final boolean wanted, final Duration timeout) throws InterruptedException
    {
        final long deadlineNs = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadlineNs)
        {
            final HttpAnswer answer = cluster.management("GET", "/actuator/partitions", null);
            if (answer.status() == 200)
            {
                for (final JsonNode broker : answer.json().path("brokers"))
                {
                    if (broker.path("brokerId").asInt(-1) == RESTARTED && broker.path("reachable").asBoolean(!wanted) == wanted)
                    {
                        return;
                    }
                }
            }
            Thread.sleep(20);
        }
        throw new AssertionError("broker " + RESTARTED + " not " + (wanted ? "reachable" : "unreachable") +
            " in GET /actuator/partitions within " + timeout.toSeconds() + " s");
    }
}
