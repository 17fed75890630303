package io.sluice.qa.operator;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.SecretKeySelector;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.sluice.kubernetes.Dockerfile;
import io.sluice.kubernetes.Manifests;
import io.sluice.qa.Exporting;
import io.sluice.qa.Records;
import io.sluice.qa.SharedCluster;
import io.sluice.qa.cluster.SluiceCluster;
import io.sluice.qa.cluster.WrittenRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import tools.jackson.databind.JsonNode;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The backup CronJob of {@code dist/kubernetes/backup-cronjob.yaml} (issue 26: {@code admin backup take --wait}), run
 * the way its pod runs it against a cluster of separate JVMs, so its command line cannot drift from the CLI's real
 * flags: the image's entrypoint with the container's args, the token from the Secret, the gateway Service's URL as this
 * cluster's management address. It ends 0 once the backup is COMPLETED, which then verifies and holds every record
 * acknowledged before it, and exporting was never paused.
 */
@Timeout(value = 6, unit = TimeUnit.MINUTES)
@Execution(ExecutionMode.SAME_THREAD)
class BackupCronJobAgainstClusterIT
{
    private static final Pattern GATEWAY_URL = Pattern.compile("https?://sluice-gateway:\\d+");
    private static final Pattern TAKEN = Pattern.compile("backup (\\d+) IN_PROGRESS");

    /** The manifests' shape is the default layout, with the filesystem store every process of the cluster shares. */
    @RegisterExtension
    static final SharedCluster SHARED = new SharedCluster();

    private Process job;

    @AfterEach
    void endTheJob()
    {
        if (job != null)
        {
            job.destroyForcibly();
        }
    }

    @Test
    void theCronJobsCommandLineTakesABackupInOneCallAndEndsWhenItCompleted() throws Exception
    {
        final SluiceCluster cluster = SHARED.cluster();
        final List<Manifests.Document> manifests = Manifests.loadAll();
        final Container backup = Manifests.only(manifests, CronJob.class).getSpec().getJobTemplate().getSpec()
            .getTemplate().getSpec().getContainers().get(0);
        final List<WrittenRecord> before = Records.write(cluster, "before-cronjob", 60);

        final Path folder = Files.createDirectories(cluster.runDirectory().resolve("cronjob"));
        final Path out = folder.resolve("job.out");
        final Path err = folder.resolve("job.err");
        final ProcessBuilder pod = new ProcessBuilder(commandLine(Dockerfile.load().commandLine(backup), cluster))
            .directory(folder.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
            .redirectOutput(out.toFile()).redirectError(err.toFile());
        pod.environment().putAll(environment(backup, cluster));
        job = pod.start();
        assertThat(job.waitFor(Hooks.HOOK_TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("the job ends").isTrue();
        assertThat(job.exitValue()).as("exit; stdout: %s stderr: %s", Hooks.read(out), Hooks.read(err)).isZero();

        final String printed = Hooks.read(out);
        final Matcher taken = TAKEN.matcher(printed);
        assertThat(taken.find()).as(printed).isTrue();
        assertThat(printed).contains("backup " + taken.group(1) + " COMPLETED");
        final JsonNode view = cluster.client().get("/actuator/backups/" + taken.group(1)).json();
        assertThat(view.path("state").asString()).as(view.toString()).isEqualTo("COMPLETED");
        final Map<Integer, Long> checkpoints = new HashMap<>();
        for (final JsonNode partition : view.path("partitions"))
        {
            checkpoints.put(partition.path("partitionId").asInt(), partition.path("checkpointPosition").asLong());
        }
        for (final WrittenRecord record : before)
        {
            assertThat(record.position()).as("%s acknowledged before the job", record)
                .isLessThanOrEqualTo(checkpoints.get(record.partitionId()));
        }
        final JsonNode verified = cluster.client().management("POST", "/actuator/backups/" + taken.group(1) + "/verify",
            null).json();
        assertThat(verified.path("ok").asBoolean()).as(verified.toString()).isTrue();
        Exporting.assertEveryPair(cluster, "EXPORTING");
        Records.awaitExported(cluster, before);
    }

    /** The image's entrypoint and the container's args, with the jar and the gateway Service as this machine has them. */
    private static List<String> commandLine(final List<String> inImage, final SluiceCluster cluster)
    {
        final List<String> command = new ArrayList<>();
        for (final String arg : inImage)
        {
            if (arg.equals("java"))
            {
                command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            }
            else if (arg.equals("/opt/sluice/sluice.jar"))
            {
                command.add(SluiceCluster.jar().toAbsolutePath().toString());
            }
            else if (GATEWAY_URL.matcher(arg).matches())
            {
                command.add(cluster.client().managementBase().toString().replaceAll("/+$", ""));
            }
            else
            {
                assertThat(arg).as("an argument this test does not translate").doesNotStartWith("/");
                command.add(arg);
            }
        }
        return command;
    }

    /** The container's env: literal values, and the gateway's token where the Secret gives it. */
    private static Map<String, String> environment(final Container backup, final SluiceCluster cluster)
    {
        final Map<String, String> environment = new LinkedHashMap<>();
        for (final EnvVar variable : backup.getEnv() == null ? List.<EnvVar>of() : backup.getEnv())
        {
            if (variable.getValueFrom() == null)
            {
                environment.put(variable.getName(), variable.getValue());
                continue;
            }
            final SecretKeySelector secret = variable.getValueFrom().getSecretKeyRef();
            assertThat(secret).as("env %s comes from a Secret", variable.getName()).isNotNull();
            assertThat(secret.getName() + "/" + secret.getKey()).as("env %s", variable.getName())
                .isEqualTo("sluice-management/token");
            environment.put(variable.getName(), cluster.token());
        }
        return environment;
    }
}
