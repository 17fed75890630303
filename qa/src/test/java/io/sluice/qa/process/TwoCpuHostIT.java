package io.sluice.qa.process;

import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.PortAllocator;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.SluiceProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A broker of {@code sluice.jar} on a host with 2 CPUs (a container limited to 2 cores; here
 * {@code -XX:ActiveProcessorCount=2}) runs the JVM's common pool with two threads, so the asynchronous steps of Ratis
 * and of the futures' deadlines do not each start a thread of their own: it logs no warning about it. Started with the
 * pool forced to one thread, the broker says so in one line, naming the option that avoids it.
 */
class TwoCpuHostIT
{
    private static final String WARNING = "common pool has parallelism";

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    @Test
    void aBrokerOnTwoCpusSharesTheCommonPoolInsteadOfAThreadPerTask()
    {
        final SluiceProcess broker = startedBroker("two-cpus", "-XX:ActiveProcessorCount=2");
        assertThat(broker.log()).doesNotContain(WARNING);
        broker.kill();
    }

    @Test
    void aBrokerWhoseCommonPoolIsForcedToOneThreadSaysWhatItCostsAndHowToAvoidIt()
    {
        final SluiceProcess broker = startedBroker("one-thread", "-XX:ActiveProcessorCount=2",
            "-Djava.util.concurrent.ForkJoinPool.common.parallelism=1");
        assertThat(broker.log()).contains(WARNING)
            .contains("-Djava.util.concurrent.ForkJoinPool.common.parallelism=2");
        broker.kill();
    }

    /** One broker of a one-broker cluster (1 partition, RF 1), started until it logs that it started. */
    private static SluiceProcess startedBroker(final String name, final String... jvmOptions)
    {
        final SluiceProcess broker = RUN.process(name, "broker", List.of(
            "--sluice.cluster.brokers=" + PortAllocator.loopbackBrokerList(1),
            "--sluice.cluster.partitions=1",
            "--sluice.cluster.replication-factor=1",
            "--sluice.broker.node-id=0",
            "--sluice.data-dir=" + RUN.directory().resolve(name).resolve("data")),
            RUN.directory().resolve(name), jvmOptions);
        broker.start();
        Await.until("broker " + name + " started", SluiceCluster.STARTUP_TIMEOUT, () ->
        {
            assertThat(broker.isAlive()).as("broker %s running; log:%n%s", name, broker.logTail(30)).isTrue();
            return broker.log().contains("broker 0 started");
        });
        return broker;
    }
}
