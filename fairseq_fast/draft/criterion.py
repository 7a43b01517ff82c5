"""The `draft_kd` training criterion: word-level knowledge distillation of a draft from its frozen
target (Kim & Rush 2016; DistillSpec, Zhou et al. 2024, for drafts). Registered when the plugin
is loaded, so fairseq-train takes it with `--user-dir $(fairseq-fast-user-dir)`:

    fairseq-train ... --criterion draft_kd --teacher-path TARGET.pt [--teacher-encoder]

loss = kd_weight * KL(p_teacher || p_student) + (1 - kd_weight) * label-smoothed cross-entropy,
summed over target tokens, with the teacher run in eval mode on the same batch. On the target's
own greedy outputs (the sequence-level distillation data of `fairseq-fast-draft`) the labels are
the teacher's argmax, and the KL term adds the rest of its distribution: what the draft must
match for sampling (acceptance rate = 1 - total variation) as well as greedy. "accuracy" in the
log is the share of tokens whose student argmax equals the teacher's argmax (teacher-forced
greedy agreement).

With --teacher-encoder the teacher's encoder runs once and both decoders read its output: the
student's own encoder, a copy of the teacher's, is neither run nor trained, so the exported draft
keeps the target's encoder exactly and the speculative generator runs it once for both models.
"""
from dataclasses import dataclass, field

import torch

from fairseq import checkpoint_utils
from fairseq.criterions import register_criterion
from fairseq.criterions.label_smoothed_cross_entropy import (
    LabelSmoothedCrossEntropyCriterion, LabelSmoothedCrossEntropyCriterionConfig)

from fairseq_fast.errors import UserError


@dataclass
class DraftKDConfig(LabelSmoothedCrossEntropyCriterionConfig):
    teacher_path: str = field(default="", metadata={"help": "the target checkpoint to distil"})
    kd_weight: float = field(default=0.75, metadata={"help": "weight of the KL term (0..1)"})
    teacher_encoder: bool = field(default=False, metadata={
        "help": "run the teacher's encoder once and feed its output to both decoders; the "
                "student's encoder (a copy of the teacher's) is neither run nor trained"})


@register_criterion("draft_kd", dataclass=DraftKDConfig)
class DraftKDCriterion(LabelSmoothedCrossEntropyCriterion):
    def __init__(self, task, sentence_avg, label_smoothing, teacher_path, kd_weight,
                 ignore_prefix_size=0, report_accuracy=False, teacher_encoder=False):
        super().__init__(task, sentence_avg, label_smoothing, ignore_prefix_size, True)
        if not 0.0 <= kd_weight <= 1.0:
            raise UserError(f"--kd-weight must be in [0, 1], got {kd_weight}")
        models, _ = checkpoint_utils.load_model_ensemble([teacher_path], task=task)
        teacher = models[0].float().eval()
        for p in teacher.parameters():
            p.requires_grad_(False)
        if teacher_encoder and getattr(teacher, "encoder", None) is None:
            raise UserError(f"--teacher-encoder: the teacher {teacher_path} has no encoder")
        self._teacher = [teacher]  # a list: not a submodule, so not trained or put in train mode
        self.kd_weight = kd_weight
        self.teacher_encoder = teacher_encoder

    def _outputs(self, model, net_input):
        """The student's and the teacher's decoder outputs for one batch."""
        teacher = self._teacher[0]
        device = net_input["src_tokens"].device
        if next(teacher.parameters()).device != device:
            teacher.to(device)  # the trainer moves the model and criterion, not this list
        if not self.teacher_encoder:
            with torch.no_grad():
                teacher_out = teacher(**net_input)
            return model(**net_input), teacher_out
        with torch.no_grad():
            encoder_out = teacher.encoder(net_input["src_tokens"],
                                          src_lengths=net_input["src_lengths"])
            teacher_out = teacher.decoder(net_input["prev_output_tokens"],
                                          encoder_out=encoder_out)
        student_out = model.decoder(net_input["prev_output_tokens"], encoder_out=encoder_out,
                                    src_lengths=net_input["src_lengths"])
        return student_out, teacher_out

    def forward(self, model, sample, reduce=True):
        net_output, teacher_out = self._outputs(model, sample["net_input"])
        teacher_lprobs = self._teacher[0].get_normalized_probs(
            teacher_out, log_probs=True).view(-1, teacher_out[0].size(-1))
        ce, nll = self.compute_loss(model, net_output, sample, reduce=True)
        lprobs, target = self.get_lprobs_and_target(model, net_output, sample)
        keep = target.ne(self.padding_idx)
        kl = (teacher_lprobs.exp() * (teacher_lprobs - lprobs)).sum(-1)
        kl = kl.masked_select(keep).sum()
        loss = self.kd_weight * kl + (1.0 - self.kd_weight) * ce
        agree = lprobs.argmax(-1).eq(teacher_lprobs.argmax(-1)).masked_select(keep)
        sample_size = sample["target"].size(0) if self.sentence_avg else sample["ntokens"]
        logging_output = {
            "loss": loss.data, "nll_loss": nll.data, "ntokens": sample["ntokens"],
            "nsentences": sample["target"].size(0), "sample_size": sample_size,
            "n_correct": int(agree.sum()), "total": int(keep.sum()),
        }
        return loss, sample_size, logging_output
