package io.sluice.qa;

import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportingStatus;
import io.sluice.qa.cluster.HttpAnswer;
import io.sluice.qa.cluster.PairState;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Issue 4: a gateway started before the brokers reports them unavailable, and becomes ready once they are up. */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
@LongRunning(seconds = 50)
class GatewayStartedBeforeBrokersIT
{
    @RegisterExtension
    static final QaRun RUN = new QaRun();

    @Test
    void gatewayReportsBrokersUnavailableUntilTheyStartThenBecomesReady()
    {
        final SluiceCluster cluster = RUN.cluster("cluster", builder -> builder.requestTimeout(Duration.ofSeconds(2)));
        cluster.startGateway();

        final HttpAnswer readiness = Await.value("the gateway's management server answering", SluiceCluster.STARTUP_TIMEOUT,
            () -> Optional.of(cluster.client().get("/actuator/health/readiness")));
        assertThat(readiness.status()).as("readiness without brokers: %s", readiness).isEqualTo(503);
        assertThat(cluster.client().isReady()).isFalse();

        final ExportingStatus status = cluster.client().exporting();
        assertThat(status.http().status()).as("GET /actuator/exporting without brokers: %s", status).isEqualTo(200);
        assertThat(status.targets()).extracting(PairState::pair).containsExactlyInAnyOrderElementsOf(cluster.allPairs());
        assertThat(status.targets()).as("every pair without its broker: %s", status)
            .allSatisfy(pair -> assertThat(pair.state()).isEqualTo("UNKNOWN"));

        final HttpAnswer write = cluster.client().postRecords("{\"key\":\"early\",\"payload\":{\"n\":1}}");
        assertThat(write.status()).as("a write with no broker up: %s", write).isEqualTo(503);
        assertThat(write.json().has("error")).as("error body: %s", write).isTrue();

        // still waiting, not crashed, a while later
        Await.quietPeriod("the gateway keeps waiting for brokers, not crashing", Duration.ofSeconds(2));
        assertThat(cluster.gateway().isAlive()).as("gateway still running without brokers").isTrue();
        assertThat(cluster.client().isReady()).isFalse();

        for (int id = 0; id < cluster.brokerCount(); id++)
        {
            cluster.startBroker(id);
        }
        cluster.awaitReady();
        cluster.awaitLeaders();
        final List<WrittenRecord> written = Records.write(cluster, "after-start", 20);
        Records.awaitExported(cluster, written);
    }
}
