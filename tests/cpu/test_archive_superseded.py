"""CPU test of scripts/archive_superseded.py, run by ctest (label cpu) in a scratch git repository:
of two runs of one command on one kind of GPU the older moves to archive/<experiment>/ as
.json.gz holding the same JSON, and the docs' paths follow it; a run of another command, of the
PyTorch script, on another GPU, or named by a report stays; without --apply nothing moves, and
--check fails while anything is superseded."""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "archive_superseded.py")


def result(argv, gpu="NVIDIA H200", experiment="sweep"):
    return {"experiment": experiment, "device": {"name": gpu}, "meta": {"argv": argv}, "records": []}


class ArchiveSuperseded(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.root = self.dir.name
        self.git("init", "-q")
        run = ["kbench", "run", "--config", "configs/gemm.json", "--out"]
        self.write_result("sweep-20261201T100000Z-aaaaaa.json", result(run + ["/tmp/a"]))  # superseded
        self.write_result("sweep-20261202T100000Z-bbbbbb.json", result(run + ["/tmp/b"]))  # the newest
        self.write_result("sweep-20261130T100000Z-cccccc.json", result(run + ["/tmp/c"], gpu="NVIDIA H100"))
        self.write_result("sweep-20261130T090000Z-dddddd.json", result(run + ["/tmp/d"]))  # a report names it
        self.write_result("sweep-torch-20261130T100000Z-eeeeee.json", result(["torch_baseline.py", "--out", "x"]))
        self.write_result("sweep-torch-20261201T100000Z-ffffff.json", result(["torch_baseline.py", "--out", "y"]))
        self.write("results/sweep/SUMMARY.md", "| sweep-20261130T090000Z-dddddd.json |\n")
        self.write("docs/kernels.md", "In `results/sweep/sweep-20261201T100000Z-aaaaaa.json`\n"
                   "[run](../results/sweep/sweep-20261201T100000Z-aaaaaa.json), `sweep-torch-20261130T100000Z-eeeeee.json`.\n")
        self.git("add", "-A")
        self.git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "results")

    def tearDown(self):
        self.dir.cleanup()

    def write(self, path, text):
        full = os.path.join(self.root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(text)

    def write_result(self, name, value):
        self.write("results/sweep/" + name, json.dumps(value))

    def git(self, *args):
        subprocess.run(["git", *args], cwd=self.root, check=True)

    def script(self, *args):
        return subprocess.run([sys.executable, SCRIPT, *args], cwd=self.root, check=True, capture_output=True,
                              text=True).stdout

    def test_lists_without_moving(self):
        listed = self.script()
        self.assertEqual(listed.split(), ["superseded", "results/sweep/sweep-20261201T100000Z-aaaaaa.json",
                                          "superseded", "results/sweep/sweep-torch-20261130T100000Z-eeeeee.json"])
        self.assertTrue(os.path.exists(os.path.join(self.root, "results/sweep/sweep-20261201T100000Z-aaaaaa.json")))
        self.assertFalse(os.path.exists(os.path.join(self.root, "archive")))

    def test_moves_the_older_runs_and_points_the_docs_at_them(self):
        self.script("--apply")
        for name in ["sweep-20261201T100000Z-aaaaaa.json", "sweep-torch-20261130T100000Z-eeeeee.json"]:
            self.assertFalse(os.path.exists(os.path.join(self.root, "results/sweep", name)))
            with gzip.open(os.path.join(self.root, "archive/sweep", name + ".gz")) as f:
                self.assertEqual(json.load(f)["experiment"], "sweep")
        for name in ["sweep-20261202T100000Z-bbbbbb.json", "sweep-20261130T100000Z-cccccc.json",
                     "sweep-20261130T090000Z-dddddd.json", "sweep-torch-20261201T100000Z-ffffff.json"]:
            self.assertTrue(os.path.exists(os.path.join(self.root, "results/sweep", name)), name)
        with open(os.path.join(self.root, "docs/kernels.md")) as f:
            self.assertEqual(f.read(), "In `archive/sweep/sweep-20261201T100000Z-aaaaaa.json.gz`\n"
                             "[run](../archive/sweep/sweep-20261201T100000Z-aaaaaa.json.gz), "
                             "`archive/sweep/sweep-torch-20261130T100000Z-eeeeee.json.gz`.\n")
        staged = subprocess.run(["git", "status", "--short"], cwd=self.root, check=True, capture_output=True,
                                text=True).stdout
        self.assertIn("A  archive/sweep/sweep-20261201T100000Z-aaaaaa.json.gz", staged)
        self.assertIn("D  results/sweep/sweep-20261201T100000Z-aaaaaa.json", staged)
        self.assertIn("nothing superseded", self.script())
        self.assertEqual(self.script("--check"), "")

    def test_check_fails_while_a_result_is_superseded(self):
        check = subprocess.run([sys.executable, SCRIPT, "--check"], cwd=self.root, capture_output=True, text=True)
        self.assertEqual(check.returncode, 1)
        self.assertEqual(len(check.stderr.strip().splitlines()), 1)
        self.assertIn("2 superseded result(s)", check.stderr)


if __name__ == "__main__":
    unittest.main()
