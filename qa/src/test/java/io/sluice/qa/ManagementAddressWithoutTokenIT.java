package io.sluice.qa;

import io.sluice.qa.cluster.PortAllocator;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.SluiceProcess;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Issue 5: with no token, a management server on a non-loopback address refuses to start. */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class ManagementAddressWithoutTokenIT
{
    @RegisterExtension
    static final QaRun RUN = new QaRun();

    @Test
    void gatewayRefusesToStartWithAnOpenManagementAddressAndNoToken()
    {
        final int broker = PortAllocator.freePortPair();
        final Path dataDirectory = RUN.directory().resolve("data");
        final SluiceProcess gateway = RUN.process("gateway", "gateway", List.of(
            "--server.port=" + PortAllocator.freePort(),
            "--management.server.port=" + PortAllocator.freePort(),
            "--management.server.address=0.0.0.0",
            "--sluice.cluster.brokers=127.0.0.1:" + broker,
            "--sluice.cluster.partitions=1",
            "--sluice.cluster.replication-factor=1",
            "--sluice.data-dir=" + dataDirectory), RUN.directory());
        gateway.start();

        assertThat(gateway.awaitExit(SluiceCluster.STARTUP_TIMEOUT))
            .as("gateway with management.server.address=0.0.0.0 and no token exits; log:%n%s", gateway.logTail(30))
            .isTrue();
        assertThat(gateway.exitCode()).as("exit code").hasValueSatisfying(code -> assertThat(code).isNotZero());
        assertThat(gateway.log()).as("a line naming the setting")
            .containsAnyOf("management.server.address", "sluice.management.token");
    }
}
