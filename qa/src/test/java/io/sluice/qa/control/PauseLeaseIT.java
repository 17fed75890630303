package io.sluice.qa.control;

import io.sluice.qa.Exporting;
import io.sluice.qa.SharedCluster;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.SluiceCluster;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 27: a pause with a lease ends by itself on every pair, on separate JVMs (3 brokers, all control voters), also
 * when the control group's leader is killed meanwhile; a later resume or pause replaces the lease.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Execution(ExecutionMode.SAME_THREAD)
class PauseLeaseIT
{
    private static final Duration ENDS_WITHIN = Duration.ofSeconds(20);

    @RegisterExtension
    static final SharedCluster SHARED = new SharedCluster();

    private SluiceCluster cluster;

    @BeforeAll
    void startCluster()
    {
        cluster = SHARED.cluster();
    }

    @BeforeEach
    void everyBrokerUpAndExporting()
    {
        Exporting.everyBrokerUpAndExporting(cluster);
    }

    @Test
    @Order(1)
    void aPauseWithAThreeSecondLeaseEndsByItselfOnEveryPair()
    {
        final Instant asked = Instant.now();
        final HttpAnswer pause = cluster.management("POST", "/actuator/exporting/pause?lease=PT3S", null);
        assertThat(pause.status()).as(pause.toString()).isEqualTo(200);
        final JsonNode held = status();
        assertThat(held.path("state").asString()).isEqualTo("PAUSED");
        assertThat(held.path("expiresAt").isNull()).as(held.toString()).isFalse();
        for (final JsonNode pair : held.path("targets"))
        {
            assertThat(pair.path("pausedSince").isNull()).as(pair.toString()).isFalse();
            assertThat(Duration.between(Instant.parse(pair.path("pausedSince").asString()),
                Instant.parse(pair.path("expiresAt").asString()))).isEqualTo(Duration.ofSeconds(3));
        }

        final JsonNode ended = awaitEveryPair("EXPORTING");

        assertThat(Duration.between(asked, Instant.now())).as("the lease ran its time").isGreaterThanOrEqualTo(Duration.ofSeconds(3));
        assertThat(ended.path("leaseExpiredAt").isNull()).as(ended.toString()).isFalse();
        for (final JsonNode pair : ended.path("targets"))
        {
            assertThat(pair.path("leaseExpiredAt").isNull()).as(pair.toString()).isFalse();
            assertThat(pair.path("expiresAt").isNull()).isTrue();
        }
    }

    @Test
    @Order(2)
    void theLeaseEndsAlsoWhenTheControlGroupsLeaderWasKilledMeanwhile()
    {
        final HttpAnswer pause = cluster.management("POST", "/actuator/exporting/pause?soft=true&lease=PT3S", null);
        assertThat(pause.status()).as(pause.toString()).isEqualTo(200);
        final int leader = controlLeader();
        assertThat(leader).isNotNegative();
        cluster.killBroker(leader);

        Await.until("every pair of the running brokers exporting again", Duration.ofSeconds(60), () ->
        {
            for (final JsonNode pair : status().path("targets"))
            {
                if (pair.path("brokerId").asInt() != leader && !"EXPORTING".equals(pair.path("state").asString()))
                {
                    return false;
                }
            }
            return true;
        });
        cluster.startBroker(leader);
        cluster.awaitBrokerAvailable(leader);
        awaitEveryPair("EXPORTING");
    }

    @Test
    @Order(3)
    void aResumeThenAPauseWithANewLeaseFollowsTheVersionRule() throws Exception
    {
        assertThat(cluster.management("POST", "/actuator/exporting/pause?lease=PT3S", null).status()).isEqualTo(200);
        assertThat(cluster.management("POST", "/actuator/exporting/resume", null).status()).isEqualTo(200);
        assertThat(cluster.management("POST", "/actuator/exporting/pause?lease=PT1H", null).status()).isEqualTo(200);

        // Past the first lease: the newer pause holds, with its own lease.
        Await.quietPeriod("past the first lease of 3 s", Duration.ofSeconds(5));
        final JsonNode held = status();
        assertThat(held.path("state").asString()).as(held.toString()).isEqualTo("PAUSED");
        assertThat(Duration.between(Instant.now(), Instant.parse(held.path("expiresAt").asString())))
            .isGreaterThan(Duration.ofMinutes(50));

        assertThat(cluster.management("POST", "/actuator/exporting/resume", null).status()).isEqualTo(200);
        final JsonNode resumed = status();
        assertThat(resumed.path("state").asString()).isEqualTo("EXPORTING");
        assertThat(resumed.path("expiresAt").isNull()).isTrue();
    }

    private JsonNode awaitEveryPair(final String state)
    {
        Await.until("every pair " + state, ENDS_WITHIN, () -> state.equals(status().path("state").asString()));
        return status();
    }

    private JsonNode status()
    {
        return cluster.management("GET", "/actuator/exporting", null).json();
    }

    private int controlLeader()
    {
        return cluster.client().get("/actuator/partitions").json().path("controlLeaderId").asInt(-1);
    }
}
