package io.sluice.gateway.management;

import io.sluice.gateway.exporting.ExportingHttpTest;
import io.sluice.gateway.exporting.FakeBrokerClient;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(
    classes = ExportingHttpTest.FakeCluster.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = { "management.server.port=0", "management.endpoint.health.group.readiness.include=readinessState" })
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ManagementServerWarmUpTest
{
    @Autowired
    private FakeBrokerClient client;

    @Test
    void theManagementServerIsWarmedByOneReadOnlyRequestAtStartThatPausesNothing(final CapturedOutput output)
    {
        await("the warm-up's log line").atMost(Duration.ofSeconds(20)).until(() ->
            output.getOut().contains("management server warmed by GET /actuator/exporters (read-only)"));
        assertThat(client.calls).as("no pause, soft pause or resume sent to a broker").isEmpty();
    }
}
