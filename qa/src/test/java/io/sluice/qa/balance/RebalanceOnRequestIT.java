package io.sluice.qa.balance;

import io.sluice.qa.Records;
import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import tools.jackson.databind.JsonNode;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static io.sluice.qa.balance.RollingRestartIT.awaitBalanced;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 18 with automatic balance off ({@code sluice.cluster.auto-rebalance=false}): a broker back from a SIGKILL
 * leads nothing until {@code POST /actuator/rebalance} moves every leadership to its preferred broker; the call needs
 * the token and refuses a misspelt parameter, moving nothing. Its own cluster (other settings than the shared one).
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class RebalanceOnRequestIT
{
    @RegisterExtension
    static final QaRun RUN = new QaRun();

    @Test
    void afterASigkillAndRestartARebalanceCallBringsTheLeadershipsBack() throws Exception
    {
        final SluiceCluster cluster = RUN.cluster("on-request", builder -> builder.token("rebalance-token")
            .property("sluice.cluster.auto-rebalance", "false"));
        cluster.start();
        cluster.awaitReady();
        cluster.awaitLeaders();
        // Mutations need the token; a typo in a parameter is refused, and neither moves anything.
        assertThat(cluster.client().management("POST", "/actuator/rebalance", null, null).status()).isEqualTo(401);
        final HttpAnswer typo = cluster.management("POST", "/actuator/rebalance?dryrun=true", null);
        assertThat(typo.status()).isEqualTo(400);
        assertThat(typo.json().path("message").asString()).contains("dryrun");

        rebalanceUntilAllOnPreferred(cluster);
        awaitBalanced(cluster, Duration.ofSeconds(10), "after the first rebalance");

        cluster.killBroker(0);
        cluster.awaitLeaders();
        cluster.startBroker(0);
        cluster.awaitBrokerAvailable(0);
        final List<WrittenRecord> written = Records.write(cluster, "after-kill", 200);
        // Automatic balance is off: broker 0 stays without leaderships until asked.
        Await.quietPeriod("automatic balance is off: broker 0 must stay without leaderships", Duration.ofSeconds(8));
        assertThat(leadersPerBroker(cluster).getOrDefault(0, 0)).as("partitions led by broker 0 before the rebalance call")
            .isZero();

        final HttpAnswer answer = rebalanceUntilAllOnPreferred(cluster);
        cluster.log("rebalance after SIGKILL and restart: " + answer);
        final JsonNode body = answer.json();
        assertThat(body.path("operation").asString()).isEqualTo("REBALANCE");
        assertThat(body.path("partitions").size()).isEqualTo(cluster.partitionCount());
        for (final JsonNode partition : body.path("partitions"))
        {
            assertThat(partition.path("leaderId").asInt()).isEqualTo(partition.path("preferredBrokerId").asInt());
        }
        awaitBalanced(cluster, Duration.ofSeconds(10), "after the rebalance call");
        Records.awaitExported(cluster, written);
        Records.assertExportedWithoutGaps(cluster, written);
    }

    /** Posts the rebalance until it answers 200 (a restarted broker may still be catching up), bounded. */
    private static HttpAnswer rebalanceUntilAllOnPreferred(final SluiceCluster cluster)
    {
        final HttpAnswer[] last = new HttpAnswer[1];
        Await.until("POST /actuator/rebalance answering 200", SluiceCluster.scaled(Duration.ofSeconds(60)), () ->
        {
            last[0] = cluster.management("POST", "/actuator/rebalance", null);
            assertThat(last[0].status()).as("rebalance answer %s", last[0]).isIn(200, 503);
            if (last[0].status() != 200)
            {
                Await.sleep(Duration.ofSeconds(1));
            }
            return last[0].status() == 200;
        });
        return last[0];
    }

    /** Broker id to the partitions it leads, as the gateway's cluster view shows them. */
    private static Map<Integer, Integer> leadersPerBroker(final SluiceCluster cluster)
    {
        final JsonNode view = cluster.client().get("/actuator/partitions").json();
        final Map<Integer, Integer> leaders = new TreeMap<>();
        for (final JsonNode broker : view.path("brokers"))
        {
            leaders.put(broker.path("brokerId").asInt(), broker.path("leaderOf").size());
        }
        return leaders;
    }
}
