"""The course checkpoint: corpus recipe, continued MLM pretraining, export and assembly."""
