package io.sluice.qa;

import io.sluice.qa.cluster.Await;
import io.sluice.qa.cluster.ExportFiles;
import io.sluice.qa.cluster.ExportedRecord;
import io.sluice.qa.cluster.GatewayClient;
import io.sluice.qa.cluster.Json;
import io.sluice.qa.cluster.PortAllocator;
import io.sluice.qa.cluster.QaRun;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.SluiceProcess;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Issue 4: the newcomer's path. {@code java -jar sluice.jar} with no arguments, from a fresh folder, takes a
 * record over HTTP on 8080 and exports it under {@code ./sluice-data/exports/file/}.
 */
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class StandaloneDefaultIT
{
    /** The standalone defaults of CONTRACT §1: client, management, and each broker's command and Raft port. */
    private static final List<Integer> DEFAULT_PORTS = List.of(8080, 9600, 26501, 26502, 26511, 26512, 26521, 26522);

    @RegisterExtension
    static final QaRun RUN = new QaRun();

    @Test
    void standaloneWithNoArgumentsExportsARecordIntoItsWorkingDirectory()
    {
        final List<Integer> taken = DEFAULT_PORTS.stream().filter(port -> !PortAllocator.isFree(port)).toList();
        Assumptions.assumeTrue(taken.isEmpty(),
            "standalone default test skipped: its fixed default ports " + taken + " are in use on this machine");

        final Path workingDirectory = RUN.directory().resolve("newcomer");
        final SluiceProcess standalone = RUN.process("standalone", null, List.of(), workingDirectory, "-Xmx512m");
        standalone.start();
        final GatewayClient client = new GatewayClient(
            URI.create("http://127.0.0.1:8080"), URI.create("http://127.0.0.1:9600"), null, Duration.ofSeconds(30));
        Await.until("standalone ready on 9600", SluiceCluster.STARTUP_TIMEOUT, () ->
        {
            assertThat(standalone.isAlive()).as("standalone running; log:%n%s", standalone.logTail(30)).isTrue();
            return client.isReady();
        });

        final WrittenRecord written = Await.value("the first record acknowledged", Records.WRITE_TIMEOUT,
            () -> Optional.of(client.write("newcomer-1", "{\"hello\":\"sluice\",\"n\":1}")));

        final ExportFiles exports = new ExportFiles(workingDirectory.resolve("sluice-data").resolve("exports").resolve("file"));
        final ExportedRecord exported = Await.value(
            "record exported to " + exports.file(written.partitionId()), Records.EXPORT_TIMEOUT,
            () -> exports.records(written.partitionId()).stream()
                .filter(record -> record.position() == written.position()).findFirst());
        assertThat(exported.key()).isEqualTo("newcomer-1");
        assertThat(exported.partitionId()).isEqualTo(written.partitionId());
        assertThat(Json.parse(exported.payloadJson())).isEqualTo(Json.parse("{\"hello\":\"sluice\",\"n\":1}"));
        assertThat(IntStream.rangeClosed(1, 3).mapToObj(id -> workingDirectory.resolve("sluice-data").resolve("broker-" + (id - 1))))
            .as("each embedded broker keeps its data under ./sluice-data")
            .allSatisfy(path -> assertThat(path).isDirectory());

        standalone.kill();
    }
}
