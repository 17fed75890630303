package io.sluice.qa.balance;

import io.sluice.qa.LongRunning;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.RollingRestart;
import io.sluice.qa.cluster.SluiceCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.concurrent.TimeUnit;

/**
 * The rolling restart of {@link RollingRestartIT} on a layout other than the shared cluster's: 12 partitions over the
 * 3 brokers, so each broker hands over and takes back four leaderships, under writers of batches whose 6 keys spread
 * over the partitions, one every 20 ms (as a StatefulSet update meets a batching client: a batch waits for the slowest
 * partition it spans). Its own cluster, so it runs beside the shared-cluster classes.
 */
@Timeout(value = 20, unit = TimeUnit.MINUTES)
@LongRunning(seconds = 80)
class RollingRestartOfTwelvePartitionsIT
{
    @RegisterExtension
    static final QaRun RUN = new QaRun();

    @Test
    void aRollingRestartBySigtermOfThreeBrokersWithTwelvePartitionsFailsNoWriteAndEndsBalanced() throws Exception
    {
        final SluiceCluster cluster = RUN.cluster("twelve", builder -> builder.partitions(12).token("rolling-token"));
        cluster.start();
        cluster.awaitReady();
        RollingRestartIT.rollingRestart(cluster, "twelve", RollingRestart.BATCH_SIZE, RollingRestart.BATCH_PAUSE);
    }
}
